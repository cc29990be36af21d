-- A user has at most one login id of each key (email, username, phone): an import replaces the one
-- it holds. The index makes a second one impossible, whatever writes it.
CREATE UNIQUE INDEX identities_user_login_id_key ON identities (user_id, login_id_key) WHERE type = 'login_id';
