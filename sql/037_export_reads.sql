-- A split export's parts are planned one at a time while the first ones are written, and the
-- coordinator projects the file's size from the bytes its finished parts wrote: a file that would
-- pass the blob store's limit is refused after its first part rather than at its commit.
ALTER TABLE export_parts ADD COLUMN bytes bigint;

-- An export may read a hot standby (DATABASE_READ_URL): only once the standby has replayed the
-- WAL written up to its request, so that it never misses a write acknowledged before it. A part
-- is read where its coordinator's snapshot lives.
ALTER TABLE tasks ADD COLUMN requested_lsn pg_lsn;
ALTER TABLE export_parts ADD COLUMN on_standby boolean NOT NULL DEFAULT false;
