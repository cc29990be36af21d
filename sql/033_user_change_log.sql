-- The change feed (docs/changes.md): every committed change to a user, by any writer, is a row
-- here, written by triggers in the writer's own transaction, so that no writer (an import, a
-- GraphQL call, another component's plain SQL) can change a user without it.
--
-- A row is one user changed by one transaction: its position is (txid, user_id), the writer's
-- transaction id first. Transaction ids are handed out when a transaction first writes, not when it
-- commits, so the feed reads only rows below the oldest transaction still running (the xmin of a
-- current snapshot): every transaction below it has ended, and no row can appear there later.
-- Readers therefore never pass a position that a later commit fills in. The record an event
-- carries is read when the event is read, in the same snapshot as the watermark, so that a later
-- event of a user never carries an older state than an earlier one.
CREATE TABLE user_change_log (
  project_id  text NOT NULL,
  txid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
  user_id     uuid NOT NULL,
  -- What the transaction did first to the user: the users row inserted (created), removed
  -- (deleted), or anything else (updated). The feed names a user that no longer exists deleted.
  kind        text NOT NULL CHECK (kind IN ('created', 'updated', 'deleted')),
  occurred_at timestamptz NOT NULL DEFAULT statement_timestamp(),
  PRIMARY KEY (project_id, txid, user_id)
);
-- Readers of every project (the publisher of the Kafka topic and the webhooks) go in position order.
CREATE INDEX user_change_log_position ON user_change_log (txid, user_id);
-- Retention deletes by age; rows arrive in time order, so a range index of a few pages finds them.
CREATE INDEX user_change_log_age ON user_change_log USING brin (occurred_at);

-- The highest transaction id retention has deleted rows of: a cursor at or below it may have
-- missed events, and is answered 410.
CREATE TABLE user_change_horizon (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  floor     xid8 NOT NULL
);
INSERT INTO user_change_horizon (floor) VALUES ('0');

-- How far each publisher of the feed has gone (the Kafka topic, the webhooks), and which process
-- publishes it: one at a time per deployment, leased (no index holds the lease, so its renewals
-- are HOT updates).
CREATE TABLE user_change_publications (
  name        text PRIMARY KEY,
  txid        xid8 NOT NULL,
  user_id     uuid NOT NULL,
  owner       text,
  lease_until timestamptz
);

-- An export's snapshot, as pg_current_snapshot() wrote it: its changes_cursor.
ALTER TABLE tasks ADD COLUMN changes_snapshot pg_snapshot;

-- Users rows: created, updated, deleted. Statement-level triggers see every row a statement
-- changed at once (COPY included), so an import batch pays one insert per statement.
CREATE FUNCTION capture_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_change_log (project_id, user_id, kind)
  SELECT c.project_id, c.id,
         CASE TG_OP WHEN 'INSERT' THEN 'created' WHEN 'DELETE' THEN 'deleted' ELSE 'updated' END
    FROM changed c
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

-- A user's rows in other tables: the user changed. A row moved to another user changes both.
-- Rows deleted with their user find no user here: its deletion is already captured. The users
-- are found by their key with an array of ids: the planner knows nothing of a transition table's
-- size, and a join could read every user of the table for each statement.
CREATE FUNCTION capture_user_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO user_change_log (project_id, user_id, kind)
    SELECT u.project_id, u.id, 'updated' FROM users u
     WHERE u.id = ANY (ARRAY(SELECT user_id FROM changed UNION SELECT user_id FROM before))
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO user_change_log (project_id, user_id, kind)
    SELECT u.project_id, u.id, 'updated' FROM users u
     WHERE u.id = ANY (ARRAY(SELECT DISTINCT user_id FROM changed))
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

-- A role's or group's key renamed: every member's record changed (records name keys).
CREATE FUNCTION capture_renamed_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'roles' THEN
    INSERT INTO user_change_log (project_id, user_id, kind)
    SELECT u.project_id, u.id, 'updated'
      FROM changed c JOIN before b ON b.id = c.id AND b.key IS DISTINCT FROM c.key
      JOIN user_roles m ON m.role_id = c.id JOIN users u ON u.id = m.user_id
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO user_change_log (project_id, user_id, kind)
    SELECT u.project_id, u.id, 'updated'
      FROM changed c JOIN before b ON b.id = c.id AND b.key IS DISTINCT FROM c.key
      JOIN user_groups m ON m.group_id = c.id JOIN users u ON u.id = m.user_id
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

-- A trigger with transition tables serves one event: three per table.
DO $$
DECLARE
  t text;
BEGIN
  EXECUTE 'CREATE TRIGGER capture_inserts AFTER INSERT ON users REFERENCING NEW TABLE AS changed
           FOR EACH STATEMENT EXECUTE FUNCTION capture_users()';
  EXECUTE 'CREATE TRIGGER capture_updates AFTER UPDATE ON users REFERENCING NEW TABLE AS changed
           FOR EACH STATEMENT EXECUTE FUNCTION capture_users()';
  EXECUTE 'CREATE TRIGGER capture_deletes AFTER DELETE ON users REFERENCING OLD TABLE AS changed
           FOR EACH STATEMENT EXECUTE FUNCTION capture_users()';
  FOREACH t IN ARRAY ARRAY['identities', 'authenticators', 'verified_claims', 'user_roles', 'user_groups'] LOOP
    EXECUTE format('CREATE TRIGGER capture_inserts AFTER INSERT ON %I REFERENCING NEW TABLE AS changed
                    FOR EACH STATEMENT EXECUTE FUNCTION capture_user_members()', t);
    EXECUTE format('CREATE TRIGGER capture_updates AFTER UPDATE ON %I
                    REFERENCING OLD TABLE AS before NEW TABLE AS changed
                    FOR EACH STATEMENT EXECUTE FUNCTION capture_user_members()', t);
    EXECUTE format('CREATE TRIGGER capture_deletes AFTER DELETE ON %I REFERENCING OLD TABLE AS changed
                    FOR EACH STATEMENT EXECUTE FUNCTION capture_user_members()', t);
  END LOOP;
  FOREACH t IN ARRAY ARRAY['roles', 'groups'] LOOP
    EXECUTE format('CREATE TRIGGER capture_renames AFTER UPDATE ON %I
                    REFERENCING OLD TABLE AS before NEW TABLE AS changed
                    FOR EACH STATEMENT EXECUTE FUNCTION capture_renamed_members()', t);
  END LOOP;
END $$;

-- Webhook endpoints may subscribe to the feed's events: they travel as task events do, with no task.
ALTER TABLE task_events ALTER COLUMN task_id DROP NOT NULL;
ALTER TABLE task_events DROP CONSTRAINT task_events_type_check;
ALTER TABLE task_events ADD CONSTRAINT task_events_type_check CHECK (type IN (
  'user_import.completed', 'user_export.completed', 'user.created', 'user.updated', 'user.deleted'));
