-- An import's details keep each record as it was submitted, and nothing reads inside it: json keeps
-- its text as written (members in the order given) and costs Postgres less to store than jsonb,
-- which parses every record into its binary form (issue: export at the speed of reading the data;
-- the details are written once per imported record).
ALTER TABLE import_details ALTER COLUMN record TYPE json USING record::json;
