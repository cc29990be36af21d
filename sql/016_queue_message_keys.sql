-- The embedded queue keeps a row per message, not per task: the parts of a split export are
-- messages of their coordinator's task, each with a key of its own, and were dropped as repeats of
-- the task's message when the task id was the queue's key.
ALTER TABLE task_queue ADD COLUMN message_key text;
UPDATE task_queue SET message_key = task_id;
ALTER TABLE task_queue ALTER COLUMN message_key SET NOT NULL;
ALTER TABLE task_queue DROP CONSTRAINT task_queue_pkey;
ALTER TABLE task_queue ADD PRIMARY KEY (message_key);
