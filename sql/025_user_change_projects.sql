-- A user change names the user's project: one relay of the deployment publishes every project's
-- changes, and the search index files each under its own project.
ALTER TABLE user_changes ADD COLUMN project_id text;
UPDATE user_changes SET project_id = current_setting('users_service.project_id');
ALTER TABLE user_changes ALTER COLUMN project_id SET NOT NULL;
