-- An import's details no longer reference their task with a foreign key. The reference cost a
-- check per detail row (a lookup of the task, locked FOR KEY SHARE), about 0.5 s of Postgres per
-- 100k records, about 4% of an import's time in Postgres (issue: export at the speed of reading
-- the data). What the key guarded still holds:
-- - details are written only in a transaction that holds the task's row FOR UPDATE while the task
--   is pending (lockImportProgress), so they are never written for a task that is gone;
-- - the one statement that deletes tasks (deleteTasks, after retention) deletes their details too.
ALTER TABLE import_details DROP CONSTRAINT import_details_task_id_fkey;
