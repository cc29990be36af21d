-- The admin graph's user list and Authgear's shapes (issue 14).
--
-- last_login_at: written by the platform's login service, read here (User.lastLoginAt and the
-- LAST_LOGIN_AT sort); imports leave it NULL. Roles and groups get Authgear's description.
ALTER TABLE users ADD COLUMN last_login_at timestamptz;
ALTER TABLE roles ADD COLUMN description text;
ALTER TABLE groups ADD COLUMN description text;

-- users(searchKeyword) served by Postgres (the embedded default, or no ClickHouse configured):
-- one text per user of what a keyword may match partially (email, username, phone number, name,
-- given and family name, and the id), case-folded, its parts apart by a unit separator so that a
-- keyword never spans two of them; a trigram GIN index answers `LIKE '%keyword%'` on it. Case
-- folding is Unicode's (ICU) where the server has ICU, as ClickHouse's lowerUTF8 is.
DO $$
DECLARE
  fold text := CASE WHEN EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')
                    THEN 'lower($1 COLLATE "und-x-icu")' ELSE 'lower($1)' END;
  trgm_schema text;
BEGIN
  EXECUTE format('CREATE FUNCTION search_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
                  RETURN %s', fold);
  CREATE FUNCTION user_search_text(attributes jsonb, id uuid) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN search_fold(coalesce(attributes->>'email', '') || chr(31) || coalesce(attributes->>'preferred_username', '')
    || chr(31) || coalesce(attributes->>'phone_number', '') || chr(31) || coalesce(attributes->>'name', '')
    || chr(31) || coalesce(attributes->>'given_name', '') || chr(31) || coalesce(attributes->>'family_name', '')
    || chr(31) || id::text);
  CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE INDEX users_search_text ON users USING gin (user_search_text(standard_attributes, id) %I.gin_trgm_ops)',
                 trgm_schema);
END $$;

-- The change stream that feeds the ClickHouse search index: every write to users appends the ids
-- it changed here, in its own transaction (when a search index is configured); the relay
-- publishes them to the `user-changes` topic and deletes what it published.
CREATE TABLE user_changes (
  seq        bigserial PRIMARY KEY,
  user_id    uuid NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
