-- online: each statement runs on its own, outside a transaction, and is recorded once done.
-- An export reads each user's second factors (its records statement without password hashes):
-- most users have none, and by authenticators_user_id each of them costs a visit to the row of
-- their primary password, only to leave it out. This index holds the second factors alone, so a
-- user without any costs a look in the index only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS authenticators_secondary ON authenticators (user_id)
  WHERE kind = 'secondary';
