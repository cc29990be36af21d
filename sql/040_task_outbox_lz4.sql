-- An import's message (the request with its records) is compressed as it is stored, inside the
-- admission of its task, which holds the project's admission lock: lz4 compresses it several
-- times faster than Postgres's default (pglz), and the relay decompresses it faster too. Only
-- values stored from now on are compressed so. A server built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE task_outbox ALTER COLUMN message SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this server has no lz4: task messages stay compressed with pglz';
END $$;
