-- A project's own bound on the tasks of each kind it runs at once (its file's
-- limits.running_tasks; NULL: the deployment's PROJECT_RUNNING_TASKS_LIMIT), read by the claim.
ALTER TABLE projects ADD COLUMN running_tasks_limit integer CHECK (running_tasks_limit > 0);

-- How many times a task's message went out: a message sent again (a lapse, a release, or a wake-up
-- of a task that waited past its project's bound) is marked so, and a replay never reads it as a
-- request of its own.
ALTER TABLE task_outbox ADD COLUMN offers integer NOT NULL DEFAULT 0;
UPDATE task_outbox SET offers = 1 WHERE published_at IS NOT NULL;
