import type { BusMessage } from '../../../schemas/bus-message.js';
import type { TaskKind } from '../../../schemas/index.js';
import type { PoolClient, Queryable } from '../pool.js';

/**
 * Takes up to `limit` unpublished messages of the outbox for the caller's transaction: marked
 * published once it commits (after publishing them), unpublished again if it rolls back. Rows
 * another relay holds are skipped. A message stays until its task ends (the trigger of sql/018),
 * to be offered again when a lease lapses; one offered again (its second going out, or a task
 * started before) says so (`again`).
 */
export async function takeOutboxMessages(client: PoolClient, limit: number): Promise<BusMessage[]> {
  const { rows } = await client.query<{ task_id: string; kind: TaskKind; message: string; again: boolean }>(
    `UPDATE task_outbox o SET published_at = clock_timestamp(), offers = o.offers + 1
       FROM tasks t
      WHERE t.id = o.task_id AND o.task_id IN (
        SELECT task_id FROM task_outbox WHERE published_at IS NULL
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING o.task_id, o.kind, o.message, o.offers > 1 OR t.attempt > 0 AS again`,
    [limit],
  );
  return rows.map((r) => ({ task_id: r.task_id, kind: r.kind, body: r.message, again: r.again }));
}

/**
 * Offers again, through the outbox, the oldest waiting task of each project and kind that has a
 * bound on its running tasks (its own, else `runningTasksLimit`; 0: none), runs fewer than it,
 * and has neither claimed a task nor had a message go out for `afterSeconds`. A slot passes such
 * a task over while its project is at the bound, and the slot its project frees takes it; if that
 * slot's process died first, nothing else would wake it. The ids offered.
 */
export async function offerPassedOverTasks(
  db: Queryable,
  afterSeconds: number,
  runningTasksLimit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ task_id: string }>(
    `WITH running AS (
       SELECT project_id, kind, count(*) AS n FROM tasks
        WHERE status = 'pending' AND owner IS NOT NULL GROUP BY project_id, kind),
     passed AS (
       SELECT DISTINCT ON (t.project_id, t.kind) t.id FROM tasks t
         JOIN task_outbox o ON o.task_id = t.id
         LEFT JOIN projects p ON p.id = t.project_id
         LEFT JOIN running r ON r.project_id = t.project_id AND r.kind = t.kind
         LEFT JOIN project_claims c ON c.project_id = t.project_id AND c.kind = t.kind
        WHERE t.status = 'pending' AND t.owner IS NULL
          AND o.published_at < clock_timestamp() - $1 * interval '1 second'
          AND coalesce(r.n, 0) < coalesce(p.running_tasks_limit, nullif($2, 0))
          AND (c.claimed_at IS NULL OR c.claimed_at < clock_timestamp() - $1 * interval '1 second')
        ORDER BY t.project_id, t.kind, t.created_at)
     UPDATE task_outbox o SET published_at = NULL FROM passed
      WHERE o.task_id = passed.id AND o.published_at IS NOT NULL
     RETURNING o.task_id`,
    [afterSeconds, runningTasksLimit],
  );
  return rows.map((r) => r.task_id);
}
