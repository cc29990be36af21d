-- Every user row belongs to a project (docs/running-many-projects.md): users, their identities, and
-- the roles and groups they are given. Rows of a deployment from before are the configured
-- project's (the migration runner names it in `users_service.project_id`). Child rows (verified
-- claims, authenticators, role and group links) belong to their user's project through it: every
-- statement reaches them from a scoped user.
--
-- Expand without a rewrite: a column added with a constant default is written in the catalog only
-- (no row is touched, no table is scanned), so each ALTER holds its lock for an instant. The
-- default also gives the configured project to rows that processes of the version before write
-- during a rolling upgrade. The project-led keys are built concurrently by 028.
SET LOCAL lock_timeout = '10s';
DO $$
DECLARE
  project text := current_setting('users_service.project_id');
BEGIN
  EXECUTE format('ALTER TABLE users ADD COLUMN project_id text NOT NULL DEFAULT %L', project);
  EXECUTE format('ALTER TABLE identities ADD COLUMN project_id text NOT NULL DEFAULT %L', project);
  EXECUTE format('ALTER TABLE roles ADD COLUMN project_id text NOT NULL DEFAULT %L', project);
  EXECUTE format('ALTER TABLE groups ADD COLUMN project_id text NOT NULL DEFAULT %L', project);
END $$;
