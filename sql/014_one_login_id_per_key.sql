-- A user has at most one login id of each key (email, username, phone): an import replaces the one
-- it holds. The index makes a second one impossible, whatever writes it. It is built on an
-- expression that no query names, so that the planner can never take it for a lookup by login id:
-- with the statistics of a table that grew fast, a plain (user_id, login_id_key) index looked as
-- cheap as identities_login_id for those lookups.
CREATE UNIQUE INDEX identities_user_login_id_key
  ON identities ((user_id::text || ' ' || login_id_key)) WHERE type = 'login_id';
