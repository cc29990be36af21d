import type { TaskKey, TaskListPage, TaskRow } from '../../pipeline/services/task-requests.js';
import { pageLimit, queryValue } from './list-query.js';

/** The largest page of a task list, and the page when the request names none. */
export const MAX_TASKS_LIMIT = 200;
export const DEFAULT_TASKS_LIMIT = 50;

const STATUSES = ['pending', 'completed', 'failed'] as const;

/**
 * A list request's page from its query: `status` (pending, completed, failed), `limit` (1 to
 * 200, 50 when not given), `after` (the cursor a page's `next` carries). Throws `refuse(message)`
 * for a query it cannot read.
 */
export function taskListPage(
  query: Record<string, string | string[] | undefined>,
  refuse: (message: string) => Error,
): TaskListPage {
  const one = (name: string) => queryValue(query, name, refuse);
  const status = one('status');
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    throw refuse(`status must be one of ${STATUSES.join(', ')}`);
  const limit = pageLimit(query, { max: MAX_TASKS_LIMIT, fallback: DEFAULT_TASKS_LIMIT }, refuse);
  const afterText = one('after');
  const after = afterText === undefined ? undefined : cursorKey(afterText);
  if (afterText !== undefined && !after) throw refuse('after is not a cursor of this list');
  return { status: status as TaskListPage['status'], after, limit };
}

/** A task's key as the opaque cursor a client sends back in `after`. */
function keyCursor(key: TaskKey): string {
  return Buffer.from(`${key.createdUs}/${key.id}`).toString('base64url');
}

/**
 * Microseconds since 1970 of the first instant after 9999-12-31: a cursor's creation time is
 * below it, so that Postgres can read it as a bigint and a timestamp.
 */
const CURSOR_US_LIMIT = 253_402_300_800_000_000n;

/** The key a cursor names, when it names one a task could have (undefined: not a cursor). */
function cursorKey(cursor: string): TaskKey | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined;
  const match = /^(\d{1,18})\/(user(?:import|export)_[A-Z2-7]{32})$/.exec(
    Buffer.from(cursor, 'base64url').toString(),
  );
  if (!match || BigInt(match[1] as string) >= CURSOR_US_LIMIT) return undefined;
  return { createdUs: match[1] as string, id: match[2] as string };
}

/**
 * The answer to a list request: each task as its status read shows it (without an import's
 * details), and `next`, the path of the next page, when more follow.
 */
export function taskList(
  found: { tasks: readonly TaskRow[]; next: TaskKey | undefined },
  page: TaskListPage,
  path: string,
  show: (task: TaskRow) => Record<string, unknown>,
): { tasks: Record<string, unknown>[]; next?: string } {
  const tasks = found.tasks.map(show);
  if (!found.next) return { tasks };
  const next = new URLSearchParams({ after: keyCursor(found.next), limit: String(page.limit) });
  if (page.status) next.set('status', page.status);
  return { tasks, next: `${path}?${next}` };
}
