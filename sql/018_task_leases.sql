-- Who runs a task is decided here, not by the bus's consumer groups. A worker claims an attempt at
-- the task: its owner, a lease the owner renews, and the attempt's number, which every write of the
-- attempt names (progress, details, completion, export parts), so that a worker that lost its
-- lease writes nothing. A lease that lapses (its owner died) is offered again through the outbox;
-- `lapses` counts how often, and past a limit the task ends `TaskExpired`.
ALTER TABLE tasks ADD COLUMN owner text;
ALTER TABLE tasks ADD COLUMN lease_until timestamptz;
ALTER TABLE tasks ADD COLUMN attempt integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN lapses integer NOT NULL DEFAULT 0;
CREATE INDEX tasks_leased ON tasks (lease_until) WHERE status = 'pending' AND owner IS NOT NULL;

-- Every attempt, who ran it, and when it began and ended: how a task's history is read, and how a
-- test proves that no two attempts at a task ever ran at the same time.
CREATE TABLE task_attempts (
  task_id    text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  attempt    integer NOT NULL,
  owner      text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  ended_at   timestamptz,
  -- completed, failed, released (its worker stopped and gave it back), lapsed (its lease ran out).
  outcome    text,
  PRIMARY KEY (task_id, attempt)
);

-- A task's message stays in the outbox until the task ends, so that a lapsed or released lease can
-- be offered again; `published_at` is set once the relay has put it on the bus.
ALTER TABLE task_outbox ADD COLUMN published_at timestamptz;
CREATE INDEX task_outbox_unpublished ON task_outbox (created_at) WHERE published_at IS NULL;

-- A task that ends closes its open attempt and drops its message, whichever statement ends it (a
-- worker, a cancel, the upkeep).
CREATE FUNCTION task_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE task_attempts SET ended_at = NEW.completed_at,
         outcome = CASE WHEN NEW.failed_at IS NULL THEN 'completed' ELSE 'failed' END
   WHERE task_id = NEW.id AND ended_at IS NULL;
  DELETE FROM task_outbox WHERE task_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER task_ended AFTER UPDATE OF status ON tasks
  FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status = 'completed') EXECUTE FUNCTION task_ended();

-- The parts of a split export belong to one attempt at the task: a later attempt's claim fences
-- the parts of the earlier one.
ALTER TABLE export_parts ADD COLUMN task_attempt integer NOT NULL DEFAULT 0;
