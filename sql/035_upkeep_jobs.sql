-- The upkeep's sweeps run once per deployment, not once per process: a process takes a job for its
-- turn by moving its due time forward, and the others find it not due. A process that dies in the
-- middle of a job leaves it to whichever process takes it at its next turn.
-- A job that walks something large a part per turn keeps where it stands in `state` (the
-- container sweep: the listing's continuation).
CREATE TABLE upkeep_jobs (
  name   text PRIMARY KEY,
  due_at timestamptz NOT NULL DEFAULT '-infinity',
  state  text
);
