-- When a task of each project and kind was last claimed: the embedded queue takes next the message
-- of the project with the fewest tasks running, and among those the one served longest ago, so
-- that one project's backlog never holds another's tasks back.
CREATE TABLE project_claims (
  project_id text NOT NULL,
  kind       text NOT NULL,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, kind)
);
