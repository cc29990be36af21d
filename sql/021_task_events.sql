-- Task events and their webhook deliveries (docs/webhooks.md). A task that ends writes its event in
-- the transaction that ends it, whichever statement ends it (a worker, a cancel, the upkeep): the
-- outbox of the webhooks. The workers fan each event out to the endpoints of the project that want
-- its type, one delivery each, and deliver them at least once.
CREATE TABLE task_events (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  task_id      text NOT NULL,
  project_id   text NOT NULL,
  type         text NOT NULL CHECK (type IN ('user_import.completed', 'user_export.completed')),
  -- The event's body as the endpoints receive it, but for the time of each attempt.
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set once its deliveries are written.
  fanned_out_at timestamptz
);
CREATE INDEX task_events_unfanned ON task_events (created_at) WHERE fanned_out_at IS NULL;
CREATE INDEX task_events_created ON task_events (created_at);

-- Times as the status reads write them (UTC, milliseconds).
CREATE FUNCTION event_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE FUNCTION task_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO task_events (task_id, project_id, type, payload)
  VALUES (NEW.id, NEW.project_id, 'user_' || NEW.kind || '.completed', jsonb_strip_nulls(jsonb_build_object(
    'task_id', NEW.id,
    'replay_of', NEW.replay_of,
    'created_at', event_time(NEW.created_at),
    'completed_at', event_time(NEW.completed_at),
    'failed_at', event_time(NEW.failed_at),
    'error', NEW.error,
    'summary', CASE WHEN NEW.kind = 'import' THEN NEW.summary END,
    'results_bytes', CASE WHEN NEW.kind = 'import' THEN NEW.file_bytes END,
    'results_sha256', CASE WHEN NEW.kind = 'import' THEN NEW.file_sha256 END,
    'record_count', CASE WHEN NEW.kind = 'export' AND NEW.file_name IS NOT NULL THEN NEW.progress_total END,
    'file_bytes', CASE WHEN NEW.kind = 'export' THEN NEW.file_bytes END,
    'file_sha256', CASE WHEN NEW.kind = 'export' THEN NEW.file_sha256 END)));
  RETURN NULL;
END $$;
CREATE TRIGGER task_event AFTER UPDATE OF status ON tasks
  FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status = 'completed') EXECUTE FUNCTION task_event();

-- One event to one endpoint: pending until delivered, failed (given up), or disabled (its endpoint
-- answered 410). `attempts` counts the attempts begun; a worker holds one until `leased_until`.
CREATE TABLE webhook_deliveries (
  event_id        uuid NOT NULL REFERENCES task_events (id) ON DELETE CASCADE,
  endpoint_id     text NOT NULL,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'disabled')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  leased_until    timestamptz,
  PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- Every attempt, recorded as it begins (an attempt whose worker died keeps no outcome) and
-- finished with what the endpoint answered.
CREATE TABLE webhook_attempts (
  id          bigserial PRIMARY KEY,
  event_id    uuid NOT NULL,
  endpoint_id text NOT NULL,
  attempt     integer NOT NULL,
  url         text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  duration_ms integer,
  status_code integer,
  error       text,
  -- delivered, retry (another attempt follows), failed (given up), disabled (410); null: unfinished.
  outcome     text CHECK (outcome IN ('delivered', 'retry', 'failed', 'disabled')),
  FOREIGN KEY (event_id, endpoint_id) REFERENCES webhook_deliveries ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (event_id, endpoint_id);

-- Endpoints that answered 410 Gone: no event goes to them until an admin enables them again.
CREATE TABLE webhook_disabled_endpoints (
  project_id  text NOT NULL,
  endpoint_id text NOT NULL,
  disabled_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (project_id, endpoint_id)
);
