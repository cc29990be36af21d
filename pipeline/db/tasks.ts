import type { TaskKind } from '../../schemas/index.js';
import { type ApiError, envelopeError } from '../errors.js';
import type { Queryable } from './pool.js';

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
  /** Export: the blob holding the file, once completed. */
  readonly file_name: string | null;
}

const TASK_COLUMNS = `id, kind, status, created_at, completed_at, failed_at, error,
  progress_processed, progress_total, summary, file_name`;

/** Records a new pending task with its stored input. */
export async function insertTask(
  db: Queryable,
  task: {
    id: string;
    kind: TaskKind;
    input: string | null;
    options: Record<string, unknown>;
    total: number;
  },
): Promise<TaskRow> {
  const { rows } = await db.query<TaskRow>(
    `INSERT INTO tasks (id, kind, input, options, progress_total) VALUES ($1, $2, $3, $4, $5) RETURNING ${TASK_COLUMNS}`,
    [task.id, task.kind, task.input, task.options, task.total],
  );
  return rows[0] as TaskRow;
}

/** The task, if it exists, is of this kind and is not past retention (even before the sweeper runs). */
export async function findTask(
  db: Queryable,
  kind: TaskKind,
  id: string,
  retentionSeconds: number,
): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks
      WHERE id = $1 AND kind = $2
        AND (status = 'pending' OR completed_at > clock_timestamp() - make_interval(secs => $3))`,
    [id, kind, retentionSeconds],
  );
  return rows[0];
}

/** A completed task past retention: its id and, for an export, the blob of its file. */
export interface ExpiredTask {
  readonly id: string;
  readonly file_name: string | null;
}

/** Completed tasks past retention, oldest first. */
export async function findExpiredTasks(db: Queryable, retentionSeconds: number): Promise<ExpiredTask[]> {
  const { rows } = await db.query<ExpiredTask>(
    `SELECT id, file_name FROM tasks
      WHERE status = 'completed' AND completed_at <= clock_timestamp() - make_interval(secs => $1)
      ORDER BY completed_at LIMIT 1000`,
    [retentionSeconds],
  );
  return rows;
}

/** Deletes tasks with their details and stored input. */
export async function deleteTasks(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query('DELETE FROM tasks WHERE id = ANY($1)', [ids]);
}

/** Removes a task that could not be announced on the bus, so it never lingers as pending. */
export async function deleteTask(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM tasks WHERE id = $1', [id]);
}

/**
 * Completes a task that could not finish (DECISIONS.md: still `completed`, with `failed_at` and
 * the envelope error); a task completed meanwhile is left as it is.
 */
export async function failTask(db: Queryable, id: string, error: ApiError): Promise<void> {
  await db.query(
    `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), failed_at = clock_timestamp(),
            error = $2 WHERE id = $1 AND status = 'pending'`,
    [id, envelopeError(error)],
  );
}
