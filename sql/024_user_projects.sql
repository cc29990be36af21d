-- Every user row belongs to a project (docs/running-many-projects.md): users, their identities, and
-- the roles and groups they are given. The same email, username, phone number, OAuth subject, role
-- key or group key may exist in many projects, so every unique and lookup key is led by the project.
-- Rows of a deployment from before are the configured project's (the migration runner names it in
-- `users_service.project_id`). Child rows (verified claims, authenticators, role and group links)
-- belong to their user's project through it: every statement reaches them from a scoped user.
ALTER TABLE users ADD COLUMN project_id text;
ALTER TABLE identities ADD COLUMN project_id text;
ALTER TABLE roles ADD COLUMN project_id text;
ALTER TABLE groups ADD COLUMN project_id text;

UPDATE users SET project_id = current_setting('users_service.project_id');
UPDATE identities SET project_id = current_setting('users_service.project_id');
UPDATE roles SET project_id = current_setting('users_service.project_id');
UPDATE groups SET project_id = current_setting('users_service.project_id');

ALTER TABLE users ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE identities ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE roles ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE groups ALTER COLUMN project_id SET NOT NULL;

DROP INDEX users_created_at_id;
CREATE INDEX users_created_at_id ON users (project_id, created_at, id);

DROP INDEX identities_login_id;
DROP INDEX identities_oauth;
DROP INDEX identities_email;
DROP INDEX identities_phone_number;
DROP INDEX identities_preferred_username;
CREATE UNIQUE INDEX identities_login_id ON identities (project_id, login_id_key, login_id) WHERE type = 'login_id';
CREATE UNIQUE INDEX identities_oauth ON identities (project_id, provider_alias, provider_subject_id) WHERE type = 'oauth';
CREATE INDEX identities_email ON identities (project_id, email) WHERE email IS NOT NULL;
CREATE INDEX identities_phone_number ON identities (project_id, phone_number) WHERE phone_number IS NOT NULL;
CREATE INDEX identities_preferred_username ON identities (project_id, preferred_username)
  WHERE preferred_username IS NOT NULL;

ALTER TABLE roles DROP CONSTRAINT roles_key_key;
ALTER TABLE groups DROP CONSTRAINT groups_key_key;
CREATE UNIQUE INDEX roles_project_key ON roles (project_id, key);
CREATE UNIQUE INDEX groups_project_key ON groups (project_id, key);
