import type { TaskKind } from '../../../schemas/index.js';
import type { Queryable } from '../pool.js';

// A task row is the single source of truth for its status; the bus carries what a worker needs to
// do the work. The statements on task rows live in this folder, one file per part of a task's life.

/** A task row as the status endpoints read it. */
export interface TaskRow {
  readonly id: string;
  readonly kind: TaskKind;
  readonly status: 'pending' | 'completed';
  readonly created_at: Date;
  readonly completed_at: Date | null;
  readonly failed_at: Date | null;
  readonly error: Record<string, unknown> | null;
  readonly progress_processed: number;
  readonly progress_total: number;
  readonly summary: Record<string, number> | null;
  /** Export: the blob holding the file, once completed, with its size and SHA-256 (hex). */
  readonly file_name: string | null;
  readonly file_bytes: string | null;
  readonly file_sha256: string | null;
  /** Import: the task whose logged message this one was replayed from. */
  readonly replay_of: string | null;
  /** The Idempotency-Key the task was asked for with, if any. */
  readonly idempotency_key: string | null;
  /** When the task was first started, if it was. */
  readonly started_at: Date | null;
  /** A file import: bytes of its upload read as it is taken in, of its size (bigints' text). */
  readonly source_bytes_read: string | null;
  readonly source_bytes: string | null;
  /** A completed export: the snapshot its records were read in (pg_snapshot text). */
  readonly changes_snapshot: string | null;
}

export const TASK_COLUMNS = `id, kind, status, created_at, completed_at, failed_at, error,
  progress_processed, progress_total, summary, file_name, file_bytes, file_sha256, replay_of, idempotency_key,
  started_at, source_bytes_read, source_bytes, changes_snapshot::text AS changes_snapshot`;

/**
 * The project's task of this kind, if it exists and is not past retention (even before the sweeper
 * runs). Another project's task does not exist here.
 */
export async function findTask(
  db: Queryable,
  project: string,
  kind: TaskKind,
  id: string,
  retentionSeconds: number,
): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks
      WHERE id = $1 AND kind = $2 AND project_id = $3
        AND (status = 'pending' OR completed_at > clock_timestamp() - make_interval(secs => $4))`,
    [id, kind, project, retentionSeconds],
  );
  return rows[0];
}

/** A pending task's project and settings, by id alone (a part's message names only its task). */
export async function findPendingTask(
  db: Queryable,
  id: string,
): Promise<{ id: string; project_id: string; options: unknown; replay_of: string | null } | undefined> {
  const { rows } = await db.query<{
    id: string;
    project_id: string;
    options: unknown;
    replay_of: string | null;
  }>(`SELECT id, project_id, options, replay_of FROM tasks WHERE id = $1 AND status = 'pending'`, [id]);
  return rows[0];
}

/** Tasks kept, by kind and state: pending (not started), running, completed, failed. */
export async function countTasksByState(
  db: Queryable,
): Promise<{ kind: TaskKind; state: string; n: number }[]> {
  const { rows } = await db.query<{ kind: TaskKind; state: string; n: number }>(
    `SELECT kind, CASE WHEN failed_at IS NOT NULL THEN 'failed' WHEN status = 'completed' THEN 'completed'
                       WHEN started_at IS NULL THEN 'pending' ELSE 'running' END AS state,
            count(*)::int AS n
       FROM tasks GROUP BY 1, 2`,
  );
  return rows;
}
