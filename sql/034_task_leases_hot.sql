-- online: each statement runs on its own, outside a transaction, and is recorded once done.
-- A lease renewal (twice a second per running task) writes lease_until, heartbeat_at and the
-- progress: none of them may be a column of an index of tasks, or every renewal writes a new
-- entry in every index of the table and the row's versions pile up under a long snapshot. The
-- running tasks are found by their owner instead (the lapsed ones among them by their lease, read
-- from those few rows), and pages keep room for a renewed row beside its old version, so that
-- renewals are heap-only (HOT) updates.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_held ON tasks (owner) WHERE status = 'pending' AND owner IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS tasks_leased;
ALTER TABLE tasks SET (fillfactor = 70);
