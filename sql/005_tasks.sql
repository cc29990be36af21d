-- Background tasks (import and export) and their state. A task row is the single source of truth
-- for its status; the task bus only says "there is work for task X".
CREATE TABLE tasks (
  id                 text PRIMARY KEY,
  kind               text NOT NULL CHECK (kind IN ('import', 'export')),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed')),
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  completed_at       timestamptz,
  failed_at          timestamptz,
  error              jsonb,
  -- The stored input (import: the request body as received); deleted with the task at retention.
  input              text,
  -- The request's settings (import: identifier and upsert), so a worker need not parse the input twice.
  options            jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Records (import) or users (export) done, of total: also the resume point of a worker.
  progress_processed integer NOT NULL DEFAULT 0,
  progress_total     integer NOT NULL DEFAULT 0,
  summary            jsonb,
  CHECK ((status = 'completed') = (completed_at IS NOT NULL))
);

CREATE INDEX tasks_completed_at ON tasks (completed_at) WHERE status = 'completed';
CREATE INDEX tasks_pending_kind ON tasks (kind, created_at) WHERE status = 'pending';

-- One row per import record, written in the same transaction as the record's effect.
CREATE TABLE import_details (
  task_id  text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  index    integer NOT NULL,
  outcome  text NOT NULL CHECK (outcome IN ('inserted', 'updated', 'skipped', 'failed')),
  user_id  uuid,
  record   jsonb NOT NULL,
  warnings jsonb,
  errors   jsonb,
  PRIMARY KEY (task_id, index)
);

-- The embedded task bus: a row per published task message, taken with FOR UPDATE SKIP LOCKED and
-- deleted when the task is done, so a worker that dies leaves it to the next one.
CREATE TABLE task_queue (
  task_id     text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  kind        text NOT NULL,
  enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX task_queue_kind ON task_queue (kind, enqueued_at);
