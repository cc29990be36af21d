-- An import's details do not reference their task with a foreign key: the reference costs a check
-- per detail row (a lookup of the task, locked FOR KEY SHARE) on the import's hottest path. What
-- such a key would guard holds without it:
-- - details are written only in a transaction that holds the task's row FOR UPDATE while the task
--   is pending (lockImportProgress), so they are never written for a task that is gone;
-- - the one statement that deletes tasks (deleteTasks, after retention) deletes their details too.
ALTER TABLE import_details DROP CONSTRAINT import_details_task_id_fkey;
