-- A large file imported by several workers at once (docs/file-imports.md, Many workers on one
-- file): taking it in routes each record by its identifier to one of `parts` parts, so that every
-- record of one user is in one part, applied in file order by whichever worker leases it.
ALTER TABLE import_files ADD COLUMN parts integer CHECK (parts > 0);

-- A frame holds records of one part: its first and last record by their index in the file.
ALTER TABLE import_file_frames ADD COLUMN part integer NOT NULL DEFAULT 0,
  ADD COLUMN last_record bigint;
UPDATE import_file_frames SET last_record = first_record + records - 1;
ALTER TABLE import_file_frames ALTER COLUMN last_record SET NOT NULL;
CREATE INDEX import_file_frames_part ON import_file_frames (project_id, upload_id, part, last_record);

-- Each part of an import task: leased by one worker at a time (a lease that lapses lets another
-- take it), and applied through `applied_through` (the index in the file after its last applied
-- record), moved in the transaction that applies each batch.
CREATE TABLE import_file_parts (
  project_id      text NOT NULL,
  task_id         text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  part            integer NOT NULL,
  upload_id       text NOT NULL,
  applied_through bigint NOT NULL DEFAULT 0,
  applied         bigint NOT NULL DEFAULT 0,
  worker          text,
  attempt         integer NOT NULL DEFAULT 0,
  lease_until     timestamptz,
  done            boolean NOT NULL DEFAULT false,
  failure         text,
  PRIMARY KEY (project_id, task_id, part)
);
