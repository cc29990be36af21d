import type { TaskKind } from '../../../schemas/index.js';
import { type ApiError, AttemptLost, envelopeError } from '../../errors.js';
import type { Queryable } from '../pool.js';
import type { TaskAttempt } from './leases.js';

/** A task's file in blob storage: the blob's name, and its size and SHA-256 (hex). */
export interface TaskFile {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * The ledger row (task_blobs) of the file a completing task names, forgotten as the task names it:
 * the ledger holds the blobs of attempts in flight and of those that ended unnamed, so that the
 * upkeep's look for abandoned files reads those few rows, however many tasks are retained.
 */
const SETTLED = `settled AS (
       DELETE FROM task_blobs b USING done WHERE b.task_id = done.id AND b.blob_name = done.file_name)`;

/**
 * Completes an import with a summary counted from its details (each record once, and its
 * warnings), and its results file when one was written; a dry run's summary also counts what would
 * have been inserted, updated and skipped.
 */
export async function completeImport(db: Queryable, attempt: TaskAttempt, results?: TaskFile): Promise<void> {
  const { rows } = await db.query(
    `WITH done AS (
     UPDATE tasks t SET status = 'completed', completed_at = clock_timestamp(),
            file_name = $4, file_bytes = $5, file_sha256 = $6,
            summary = (SELECT jsonb_build_object(
                'total', count(*),
                'inserted', count(*) FILTER (WHERE outcome = 'inserted'),
                'updated', count(*) FILTER (WHERE outcome = 'updated'),
                'skipped', count(*) FILTER (WHERE outcome = 'skipped'),
                'failed', count(*) FILTER (WHERE outcome = 'failed'),
                'warnings', coalesce(sum(jsonb_array_length(warnings)), 0))
              || CASE WHEN (t.options->>'dry_run')::boolean THEN jsonb_build_object(
                'would_insert', count(*) FILTER (WHERE outcome = 'would_insert'),
                'would_update', count(*) FILTER (WHERE outcome = 'would_update'),
                'would_skip', count(*) FILTER (WHERE outcome = 'would_skip')) ELSE '{}' END
              FROM import_details d WHERE d.task_id = t.id)
      WHERE t.id = $1 AND t.status = 'pending' AND t.attempt = $2 AND t.owner = $3
      RETURNING t.id, t.file_name),
     ${SETTLED}
     SELECT id FROM done`,
    [
      attempt.id,
      attempt.attempt,
      attempt.owner,
      results?.name ?? null,
      results?.bytes ?? null,
      results?.sha256 ?? null,
    ],
  );
  if (rows.length !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}

/**
 * Completes an export with the name of its committed file, and returns the file the task names
 * after the call: this one, or another's (null: none) when this attempt no longer owned the task
 * (it was cancelled, expired, or taken over).
 */
export async function completeExport(
  db: Queryable,
  attempt: TaskAttempt,
  fileName: string,
  file: { readonly bytes: number; readonly sha256: string },
  snapshot: string,
): Promise<string | null> {
  const { rows } = await db.query<{ file_name: string | null }>(
    `WITH done AS (
       UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), file_name = $2,
              file_bytes = $3, file_sha256 = $4, progress_processed = progress_total,
              changes_snapshot = $7::pg_snapshot
        WHERE id = $1 AND status = 'pending' AND attempt = $5 AND owner = $6
        RETURNING id, file_name),
     ${SETTLED}
     SELECT coalesce((SELECT file_name FROM done), (SELECT file_name FROM tasks WHERE id = $1)) AS file_name`,
    [attempt.id, fileName, file.bytes, file.sha256, attempt.attempt, attempt.owner, snapshot],
  );
  return rows[0]?.file_name ?? null;
}

/** A task that ended failed: who it belonged to, to give back what it took. */
export interface FailedTask {
  readonly id: string;
  readonly kind: TaskKind;
  readonly project_id: string;
  /** Whether a worker had taken it: its work had begun. */
  readonly started: boolean;
}

/**
 * Completes a pending task that could not finish (docs/decisions.md: still `completed`, with
 * `failed_at` and the envelope error); a task completed meanwhile, or (given `attempt`) no longer
 * that attempt's, is left as it is (undefined).
 */
export async function failTask(
  db: Queryable,
  id: string,
  error: ApiError,
  attempt?: TaskAttempt,
): Promise<FailedTask | undefined> {
  const { rows } = await db.query<FailedTask>(
    `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), failed_at = clock_timestamp(),
            error = $2
      WHERE id = $1 AND status = 'pending' AND ($3::int IS NULL OR (attempt = $3 AND owner = $4))
      RETURNING id, kind, project_id, started_at IS NOT NULL AS started`,
    [id, envelopeError(error), attempt?.attempt ?? null, attempt?.owner ?? null],
  );
  return rows[0];
}

/**
 * Fails the pending tasks that cannot finish: whose lease lapsed `maxLapses` times and that nobody
 * holds (`expired`), or exports started more than `exportLimitSeconds` ago (`timedOut`). A task
 * waiting on the bus, however long, is neither.
 */
export async function failAbandonedTasks(
  db: Queryable,
  limits: { maxLapses: number; exportLimitSeconds: number },
  errors: { expired: ApiError; timedOut: ApiError },
): Promise<FailedTask[]> {
  // A row another transaction holds (a worker's batch on a host that vanished) is skipped, not
  // waited for: every process runs this statement, and its relay of the outbox waits behind it.
  const { rows } = await db.query<FailedTask>(
    `WITH abandoned AS (
       SELECT id FROM tasks
        WHERE status = 'pending'
          AND ((lapses >= $1 AND owner IS NULL)
               OR (kind = 'export' AND started_at <= clock_timestamp() - make_interval(secs => $2)))
        FOR UPDATE SKIP LOCKED)
     UPDATE tasks t SET status = 'completed', completed_at = clock_timestamp(), failed_at = clock_timestamp(),
            error = CASE WHEN t.kind = 'export' AND t.started_at <= clock_timestamp() - make_interval(secs => $2)
                         THEN $4::jsonb ELSE $3::jsonb END
       FROM abandoned WHERE t.id = abandoned.id
     RETURNING t.id, t.kind, t.project_id, t.started_at IS NOT NULL AS started`,
    [
      limits.maxLapses,
      limits.exportLimitSeconds,
      envelopeError(errors.expired),
      envelopeError(errors.timedOut),
    ],
  );
  return rows;
}
