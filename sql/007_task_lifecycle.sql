-- Tasks that can never be lost, leaked or left pending (issue: failure paths).
--
-- project_id: a task belongs to the project that created it; other projects cannot read it.
-- heartbeat_at: last sign of life of the worker running it (set when a worker takes it, then
--   every few seconds); a pending task with no sign of life for too long ends `TaskExpired`.
-- started_at: when a worker first took it (an export running too long ends `TaskTimedOut`).
-- input_key_id: the key that encrypted the secret members of the stored input.
ALTER TABLE tasks ADD COLUMN project_id text NOT NULL DEFAULT 'default';
ALTER TABLE tasks ALTER COLUMN project_id DROP DEFAULT;
ALTER TABLE tasks ADD COLUMN started_at timestamptz;
ALTER TABLE tasks ADD COLUMN heartbeat_at timestamptz;

DROP INDEX tasks_pending_kind;
CREATE INDEX tasks_pending ON tasks (project_id, kind, created_at) WHERE status = 'pending';

-- The transactional outbox of task messages: written in the transaction that creates the task,
-- so a task and its message never part. A relay publishes each row on the bus and deletes it.
CREATE TABLE task_outbox (
  task_id    text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  kind       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
