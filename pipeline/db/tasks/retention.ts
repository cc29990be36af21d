import type { Queryable } from '../pool.js';

/** A completed task past retention: its id and, for an export, the blob of its file. */
export interface ExpiredTask {
  readonly id: string;
  readonly file_name: string | null;
}

/** Completed tasks past retention, oldest first. */
export async function findTasksPastRetention(
  db: Queryable,
  retentionSeconds: number,
): Promise<ExpiredTask[]> {
  const { rows } = await db.query<ExpiredTask>(
    // statement_timestamp(), not clock_timestamp(): a stable bound is a bound of the index scan,
    // where a volatile one is a filter on every retained task.
    `SELECT id, file_name FROM tasks
      WHERE status = 'completed' AND completed_at <= statement_timestamp() - make_interval(secs => $1)
      ORDER BY completed_at LIMIT 1000`,
    [retentionSeconds],
  );
  return rows;
}

/**
 * Deletes tasks with their details and outbox rows (the import log keeps its messages). The
 * details go in the same statement: no foreign key takes them (sql/013). Only completed tasks
 * are deleted, and a completed import is never given more details.
 */
export async function deleteTasks(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM tasks WHERE id = ANY($1) RETURNING id)
     DELETE FROM import_details WHERE task_id IN (SELECT id FROM gone)`,
    [ids],
  );
}
