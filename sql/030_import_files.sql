-- Files imported from blob storage (docs/file-imports.md). A client asks for an upload (a row and a
-- write-only signed URL of one blob, valid until expires_at), uploads the file, then starts one
-- import that names it. The task takes the file in: it reads the upload once and writes the sealed
-- copy (sealed_blob) the import applies from and a replay reads again, kept until kept_until; the
-- upload itself is deleted once taken in. An upload no import named is swept after expires_at.
CREATE TABLE import_files (
  project_id  text NOT NULL,
  upload_id   text NOT NULL,
  upload_blob text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  -- The import that named the upload (one at most), and how it reads it (format, compression,
  -- the CSV's mapping, the snapshot of the upload taken at acceptance, its size).
  task_id     text UNIQUE,
  source      jsonb,
  sealed_blob text,
  -- Records in the sealed copy once the whole upload was taken in (NULL: not yet).
  records     bigint,
  kept_until  timestamptz,
  PRIMARY KEY (project_id, upload_id)
);
CREATE INDEX import_files_unused ON import_files (expires_at) WHERE task_id IS NULL;
CREATE INDEX import_files_open ON import_files (project_id, expires_at) WHERE task_id IS NULL;
CREATE INDEX import_files_kept ON import_files (kept_until) WHERE kept_until IS NOT NULL;
CREATE INDEX import_files_taking_in ON import_files (task_id) WHERE task_id IS NOT NULL AND kept_until IS NULL;
CREATE UNIQUE INDEX import_files_upload_blob ON import_files (upload_blob);
CREATE UNIQUE INDEX import_files_sealed_blob ON import_files (sealed_blob);

-- The sealed copy's frames, in file order: each a run of records sealed on its own, so an attempt
-- reads on from the frame of its task's resume point (a ranged read) and no further back. A frame
-- is recorded in the transaction that fences its attempt, after its block is committed.
CREATE TABLE import_file_frames (
  project_id   text NOT NULL,
  upload_id    text NOT NULL,
  frame        integer NOT NULL,
  first_record bigint NOT NULL,
  records      integer NOT NULL,
  block_id     text NOT NULL,
  sealed_start bigint NOT NULL,
  sealed_bytes integer NOT NULL,
  -- Bytes of the upload (as stored, compressed or not) read when this frame was cut: its progress.
  source_end   bigint NOT NULL,
  PRIMARY KEY (project_id, upload_id, frame),
  FOREIGN KEY (project_id, upload_id) REFERENCES import_files ON DELETE CASCADE
);

-- How far a file import's taking in went, for its status: bytes of the upload read, of its size.
ALTER TABLE tasks ADD COLUMN source_bytes_read bigint, ADD COLUMN source_bytes bigint;
