-- The ledger of blobs that task attempts write is every task's, not the export's: an import's
-- results file is recorded in it too. Renamed to say so; its rows and rules are unchanged.
ALTER TABLE export_blobs RENAME TO task_blobs;
ALTER INDEX export_blobs_pkey RENAME TO task_blobs_pkey;
ALTER INDEX export_blobs_task_id RENAME TO task_blobs_task_id;
