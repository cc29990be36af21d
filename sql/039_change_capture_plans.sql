-- The member tables' capture (033) finds the changed users with a statement planned once per
-- connection and kept: a worker's first batch into a new deployment plans it against a users table
-- of a few rows, and a sequential scan of users stays its plan while the table grows, each
-- statement comparing every user with every id of the batch. Planned at each run instead, with the ids as a
-- parameter, it reads the users by their key.
CREATE OR REPLACE FUNCTION capture_user_members() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ids := ARRAY(SELECT user_id FROM changed UNION SELECT user_id FROM before);
  ELSE
    ids := ARRAY(SELECT DISTINCT user_id FROM changed);
  END IF;
  EXECUTE 'INSERT INTO user_change_log (project_id, user_id, kind)
           SELECT u.project_id, u.id, ''updated'' FROM users u WHERE u.id = ANY ($1)
           ON CONFLICT DO NOTHING'
    USING ids;
  RETURN NULL;
END $$;
