-- A project's tasks of a kind, newest first, a page at a time (the list endpoints): a keyset on
-- (created_at, id) read backwards from where the last page ended.
CREATE INDEX tasks_listed ON tasks (project_id, kind, created_at DESC, id DESC);
