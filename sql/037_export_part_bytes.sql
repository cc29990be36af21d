-- A split export's parts are planned one at a time while the first ones are written, and the
-- coordinator projects the file's size from the bytes its finished parts wrote: a file that would
-- pass the blob store's limit is refused after its first part rather than at its commit.
ALTER TABLE export_parts ADD COLUMN bytes bigint;
