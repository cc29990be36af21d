-- The account fields Authgear's import has gained: the period a user may sign in (either bound
-- absent: open on that side), and when an imported password must be changed. The import fails a
-- record whose period ends before it begins; the check keeps it so.
ALTER TABLE users ADD COLUMN account_valid_from timestamptz;
ALTER TABLE users ADD COLUMN account_valid_until timestamptz;
ALTER TABLE users ADD CONSTRAINT users_account_validity
  CHECK (account_valid_from IS NULL OR account_valid_until IS NULL OR account_valid_from <= account_valid_until);
ALTER TABLE authenticators ADD COLUMN expire_after timestamptz;
