-- When a task of each project and kind was last claimed: a worker's slot takes next a task of the
-- project with the fewest tasks of the kind running and, among those, the one served longest ago,
-- so that one project's backlog never holds another's tasks back.
CREATE TABLE project_claims (
  project_id text NOT NULL,
  kind       text NOT NULL,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, kind)
);
