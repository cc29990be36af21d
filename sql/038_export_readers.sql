-- The export readers of the deployment that hold no part: an export's coordinator while it walks
-- its first range and, when the export is one part, while it reads its records. With the parts
-- being written, they are counted against EXPORT_READERS_MAX, so that exports, however many
-- projects ask for them, never read the database with more than that many connections at once.
-- A reader whose worker died stops renewing its lease and no longer counts.
CREATE TABLE export_readers (
  task_id     text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  holder      text NOT NULL,
  lease_until timestamptz NOT NULL
);
