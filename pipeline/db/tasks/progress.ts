import { AttemptLost } from '../../errors.js';
import type { PoolClient, Queryable } from '../pool.js';
import type { TaskAttempt } from './leases.js';

/**
 * Sets the number of users an export will write, and starts its count of written ones again
 * (`keepProcessed`: a split export learns its total while its parts are already being written).
 */
export async function setProgressTotal(
  db: Queryable,
  attempt: TaskAttempt,
  total: number,
  { keepProcessed = false }: { readonly keepProcessed?: boolean } = {},
): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE tasks SET progress_total = $4, progress_processed = CASE WHEN $5 THEN progress_processed ELSE 0 END
      WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3`,
    [attempt.id, attempt.attempt, attempt.owner, total, keepProcessed],
  );
  if (rowCount !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}

/**
 * How many of the task's records are applied, for a pending task that this attempt owns; a task
 * that is gone or completed has nothing left to apply (Infinity). Throws AttemptLost when another
 * attempt owns it now (or nobody: it was released).
 */
function attemptProgress(
  row: { progress_processed: number; ours: boolean } | undefined,
  attempt: TaskAttempt,
): number {
  if (!row) return Number.POSITIVE_INFINITY;
  if (!row.ours) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
  return row.progress_processed;
}

/**
 * Locks the task row for the caller's transaction and returns how many import records are already
 * applied (attemptProgress): the fence of every batch's writes.
 */
export async function lockImportProgress(client: PoolClient, attempt: TaskAttempt): Promise<number> {
  const { rows } = await client.query<{ progress_processed: number; ours: boolean }>(
    `SELECT progress_processed, attempt = $2 AND owner IS NOT DISTINCT FROM $3 AS ours
       FROM tasks WHERE id = $1 AND status = 'pending' FOR UPDATE`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  return attemptProgress(rows[0], attempt);
}

/**
 * Holds the right to run a dry run of the task for the caller's transaction, and returns how many
 * of its records are already applied (attemptProgress: Infinity when the task ended, AttemptLost
 * when another attempt owns it). The right is
 * an advisory lock named by the task, not a lock of its row: a dry run holds it for its whole
 * request, and the row must stay free for the task's lease renewals and for the upkeep meanwhile.
 */
export async function holdDryRun(client: PoolClient, attempt: TaskAttempt): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [attempt.id]);
  const { rows } = await client.query<{ progress_processed: number; ours: boolean }>(
    `SELECT progress_processed, attempt = $2 AND owner IS NOT DISTINCT FROM $3 AS ours
       FROM tasks WHERE id = $1 AND status = 'pending'`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  return attemptProgress(rows[0], attempt);
}

/**
 * Moves the import's resume point, in the transaction that applied the records before it, and
 * renews the attempt's lease; AttemptLost (rolling the transaction back) when the attempt no longer
 * owns the task.
 */
export async function saveImportProgress(
  client: PoolClient,
  attempt: TaskAttempt,
  processed: number,
  leaseMs: number,
): Promise<void> {
  const { rowCount } = await client.query(
    `UPDATE tasks SET progress_processed = $4, heartbeat_at = clock_timestamp(),
            lease_until = clock_timestamp() + $5 * interval '1 millisecond'
      WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3`,
    [attempt.id, attempt.attempt, attempt.owner, processed, leaseMs],
  );
  if (rowCount !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}
