import type { TaskKind } from '../../../schemas/index.js';
import type { Queryable } from '../pool.js';
import { TASK_COLUMNS, type TaskRow } from './task-rows.js';

/** Which of a project's tasks a list shows: by state, newest first, after a key, how many. */
export interface TaskListPage {
  /** `pending`; `completed` (done or failed, as the status member says); `failed` only. */
  readonly status?: 'pending' | 'completed' | 'failed' | undefined;
  /** The key of the last task of the page before: this page starts after it. */
  readonly after?: TaskKey | undefined;
  readonly limit: number;
}

/** Where a task stands in the list: its creation time (microseconds since the epoch) and id. */
export interface TaskKey {
  readonly createdUs: string;
  readonly id: string;
}

/**
 * The project's tasks of this kind not past retention, newest first: a page, and the key of its
 * last task when more follow.
 */
export async function listTasks(
  db: Queryable,
  project: string,
  kind: TaskKind,
  page: TaskListPage,
  retentionSeconds: number,
): Promise<{ tasks: TaskRow[]; next: TaskKey | undefined }> {
  const { rows } = await db.query<TaskRow & { created_us: string }>(
    `SELECT ${TASK_COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us
       FROM tasks
      WHERE project_id = $1 AND kind = $2
        AND (status = 'pending' OR completed_at > clock_timestamp() - make_interval(secs => $3))
        AND CASE $4::text WHEN 'pending' THEN status = 'pending'
                          WHEN 'completed' THEN status = 'completed'
                          WHEN 'failed' THEN failed_at IS NOT NULL
                          ELSE true END
        AND ($5::bigint IS NULL
             OR (created_at, id) < ('epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6::text))
      ORDER BY created_at DESC, id DESC
      LIMIT $7`,
    [
      project,
      kind,
      retentionSeconds,
      page.status ?? null,
      page.after?.createdUs ?? null,
      page.after?.id ?? null,
      page.limit + 1,
    ],
  );
  const more = rows.length > page.limit;
  const tasks = rows.slice(0, page.limit).map(({ created_us: _us, ...task }) => task);
  const last = more ? rows[page.limit - 1] : undefined;
  return { tasks, next: last && { createdUs: last.created_us, id: last.id } };
}
