-- online: each statement runs on its own, outside a transaction, and is recorded once done.
-- The project-led keys of 024's tables, built beside the old ones without blocking a write
-- (CREATE INDEX CONCURRENTLY), then the old ones dropped the same way and the new ones given their
-- names. The same email, username, phone number, OAuth subject, role key or group key may then
-- exist in many projects. A run cut short goes on from the statement it stopped at (an index left
-- invalid by it is built again).
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_project_created_at_id ON users (project_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS users_created_at_id;
ALTER INDEX IF EXISTS users_project_created_at_id RENAME TO users_created_at_id;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS identities_project_login_id ON identities (project_id, login_id_key, login_id) WHERE type = 'login_id';
DROP INDEX CONCURRENTLY IF EXISTS identities_login_id;
ALTER INDEX IF EXISTS identities_project_login_id RENAME TO identities_login_id;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS identities_project_oauth ON identities (project_id, provider_alias, provider_subject_id) WHERE type = 'oauth';
DROP INDEX CONCURRENTLY IF EXISTS identities_oauth;
ALTER INDEX IF EXISTS identities_project_oauth RENAME TO identities_oauth;

CREATE INDEX CONCURRENTLY IF NOT EXISTS identities_project_email ON identities (project_id, email) WHERE email IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS identities_email;
ALTER INDEX IF EXISTS identities_project_email RENAME TO identities_email;

CREATE INDEX CONCURRENTLY IF NOT EXISTS identities_project_phone_number ON identities (project_id, phone_number) WHERE phone_number IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS identities_phone_number;
ALTER INDEX IF EXISTS identities_project_phone_number RENAME TO identities_phone_number;

CREATE INDEX CONCURRENTLY IF NOT EXISTS identities_project_preferred_username ON identities (project_id, preferred_username) WHERE preferred_username IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS identities_preferred_username;
ALTER INDEX IF EXISTS identities_project_preferred_username RENAME TO identities_preferred_username;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS roles_project_key ON roles (project_id, key);
ALTER TABLE roles DROP CONSTRAINT IF EXISTS roles_key_key;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS groups_project_key ON groups (project_id, key);
ALTER TABLE groups DROP CONSTRAINT IF EXISTS groups_key_key;

