-- The projects of a deployment (userctl projects): each one's id, its domain (the Host its admin
-- calls name) and its project file, sealed: a project file holds secrets (webhook secrets, a
-- Firebase signer key). Every change moves the registry's revision in its transaction; each
-- process reads that one number every second and reads the projects again when it moved.
CREATE TABLE projects (
  id         text PRIMARY KEY,
  domain     text NOT NULL,
  document   text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX projects_domain ON projects (lower(domain));

CREATE TABLE project_registry (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  revision bigint NOT NULL
);
INSERT INTO project_registry (revision) VALUES (0);
