-- A task event names the project the task belongs to: a receiver serving many projects from one
-- endpoint (a platform's own audit, its billing) tells them apart.
CREATE OR REPLACE FUNCTION task_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO task_events (task_id, project_id, type, payload)
  VALUES (NEW.id, NEW.project_id, 'user_' || NEW.kind || '.completed', jsonb_strip_nulls(jsonb_build_object(
    'task_id', NEW.id,
    'project_id', NEW.project_id,
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
