-- The import topic is the durable log of import requests (issue: replay).
--
-- A task message now carries what its worker needs: an import's message holds the whole request
-- (identifier, upsert, records with their secret members sealed), so the bus, not the task row,
-- keeps it, and a replay can read it back. The outbox and the embedded queue hold the message text.
-- replay_of: the import task whose logged message a replayed task was made from.
ALTER TABLE tasks ADD COLUMN replay_of text;

ALTER TABLE task_outbox ADD COLUMN message text;
ALTER TABLE task_queue ADD COLUMN message text;

-- Messages already on their way are rebuilt from their tasks, in the shape the workers now read;
-- then the task rows keep no input.
CREATE TEMPORARY VIEW logged_message AS
  SELECT t.id, CASE WHEN t.kind = 'import' THEN json_build_object(
           'task_id', t.id, 'kind', t.kind, 'project_id', t.project_id,
           'request', json_build_object(
             'identifier', t.options->>'identifier',
             'upsert', coalesce((t.options->>'upsert')::boolean, false),
             'records', coalesce(t.input::json->'records', '[]'::json)))
         ELSE json_build_object('task_id', t.id, 'kind', t.kind) END::text AS message
    FROM tasks t;
UPDATE task_outbox o SET message = m.message FROM logged_message m WHERE m.id = o.task_id;
UPDATE task_queue q SET message = m.message FROM logged_message m WHERE m.id = q.task_id;
DROP VIEW logged_message;
ALTER TABLE task_outbox ALTER COLUMN message SET NOT NULL;
ALTER TABLE task_queue ALTER COLUMN message SET NOT NULL;
ALTER TABLE tasks DROP COLUMN input;

-- The embedded queue is the import log on the embedded default: a processed message is kept (its
-- processed_at set) for the log's retention, beyond its task's; `position` is its offset.
ALTER TABLE task_queue DROP CONSTRAINT task_queue_task_id_fkey;
ALTER TABLE task_queue ADD COLUMN position bigserial;
ALTER TABLE task_queue ADD COLUMN processed_at timestamptz;
DROP INDEX task_queue_kind;
CREATE INDEX task_queue_waiting ON task_queue (kind, position) WHERE processed_at IS NULL;
CREATE UNIQUE INDEX task_queue_log ON task_queue (kind, position);
CREATE INDEX task_queue_log_time ON task_queue (kind, enqueued_at);

-- A replay of the import log: what it reads (from, to: the end positions taken when it first
-- started), how far it got per partition, and its counts. Its progress is written in the
-- transaction that creates each task, so a replay started again creates no task twice.
CREATE TABLE import_replays (
  id            text PRIMARY KEY,
  bus           text NOT NULL,
  from_position text NOT NULL,
  to_position   text,
  upsert        boolean,
  end_offsets   jsonb NOT NULL,
  next_offsets  jsonb NOT NULL,
  -- Tasks created so far, and their records.
  tasks         integer NOT NULL DEFAULT 0,
  records       integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at   timestamptz
);

-- An import request sent again with the same Idempotency-Key (a client that lost the answer, or
-- was restarted) gets the task the first one created, for as long as that task is kept.
ALTER TABLE tasks ADD COLUMN idempotency_key text;
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (project_id, kind, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- Who asked for a task, for its log lines: the request id and the admin (the JWT's sub).
ALTER TABLE tasks ADD COLUMN requested_by jsonb;
