-- The ranges of users a large export is split into, so that several workers write one file
-- (issue: export at the speed of reading the data). The worker that took the task (the
-- coordinator) holds the export's snapshot open and names it here; each part is read under that
-- snapshot by whichever worker claims it, its blocks staged into the task's blob, and the
-- coordinator commits the blob's block list in part order once every part is done. Each attempt
-- at the task writes a blob of its own, so the blob names the plan: two attempts that run at once
-- (the bus may deliver a task twice) never touch each other's parts.
CREATE TABLE export_parts (
  task_id     text NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  part        integer NOT NULL CHECK (part >= 0),
  blob_name   text NOT NULL,
  -- pg_export_snapshot() of the coordinator's transaction: gone when that transaction ends.
  snapshot    text NOT NULL,
  coordinator text NOT NULL,
  -- The part's users in the keyset (created_at, id): after the first bound (none: from the
  -- first user), through the second (none: to the last user).
  after_at    timestamptz,
  after_id    uuid,
  through_at  timestamptz,
  through_id  uuid,
  -- Who works the part, until when (a lease renewed while it works), and on which attempt.
  claimed_by  text,
  lease_until timestamptz,
  attempt     integer NOT NULL DEFAULT 0,
  processed   integer NOT NULL DEFAULT 0,
  -- Set when the part's blocks are all staged: their ids, in order.
  block_ids   text[],
  -- Set when the part cannot be written: the coordinator fails the export with it.
  failure     text,
  PRIMARY KEY (blob_name, part)
);
CREATE INDEX export_parts_task_id ON export_parts (task_id);
