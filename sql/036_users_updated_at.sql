-- online: each statement runs on its own, outside a transaction, and is recorded once done.
-- An export with `updated_since` reads the users changed since then by this index, and sorts
-- those few in creation order, rather than reading every user of the project in creation order
-- to keep the few (docs/api.md, export filters).
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_updated_at ON users (project_id, updated_at);
