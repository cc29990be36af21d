-- Import and export request quality (issue: migrations without loss).
--
-- request_digest: SHA-256 of the request body a task's Idempotency-Key came with. The same key with
-- another body is refused (IdempotencyKeyReused) instead of answering a task made for other data.
ALTER TABLE tasks ADD COLUMN request_digest text;

-- A dry run's details: what a real run would do, nothing written.
ALTER TABLE import_details DROP CONSTRAINT import_details_outcome_check;
ALTER TABLE import_details ADD CONSTRAINT import_details_outcome_check
  CHECK (outcome IN ('inserted', 'updated', 'skipped', 'failed', 'would_insert', 'would_update', 'would_skip'));
