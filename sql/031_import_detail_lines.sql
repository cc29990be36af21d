-- The line of a file import's record in its file (ndjson, CSV), shown in its detail beside its index.
ALTER TABLE import_details ADD COLUMN line integer;
