-- A completed export names the size and SHA-256 of its file, so that a client can check that what
-- it downloaded is the whole file.
ALTER TABLE tasks ADD COLUMN file_bytes bigint;
ALTER TABLE tasks ADD COLUMN file_sha256 text;
