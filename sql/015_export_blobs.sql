-- The blob each export attempt writes, recorded before the attempt can commit it. An attempt that
-- dies after committing its blob but before completing its task (a killed worker, a Postgres
-- blip) leaves a whole file that the task does not name; this record lets the upkeep delete it
-- once the task is completed with another file or gone. No foreign key: a row outlives its task
-- until the upkeep has deleted the blob it names.
CREATE TABLE export_blobs (
  blob_name   text PRIMARY KEY,
  task_id     text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX export_blobs_task_id ON export_blobs (task_id);
-- Whether a task names a blob, asked of each blob the container sweep finds.
CREATE INDEX tasks_file_name ON tasks (file_name) WHERE file_name IS NOT NULL;
