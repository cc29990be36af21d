import type { BusMessage } from '../../../schemas/bus-message.js';
import { TASK_KINDS, type TaskKind } from '../../../schemas/index.js';
import type { PoolClient, Queryable } from '../pool.js';

/**
 * Takes up to `limit` unpublished messages of the outbox for the caller's transaction: marked
 * published once it commits (after publishing them), unpublished again if it rolls back. Rows
 * another relay holds are skipped. A message stays until its task ends (the trigger of sql/018),
 * to be offered again when a lease lapses; one offered again (its second going out, whatever
 * claimed the task meanwhile: a freed slot may claim it before its first) says so (`again`).
 */
export async function takeOutboxMessages(client: PoolClient, limit: number): Promise<BusMessage[]> {
  const { rows } = await client.query<{ task_id: string; kind: TaskKind; message: string; again: boolean }>(
    `UPDATE task_outbox o SET published_at = clock_timestamp(), offers = o.offers + 1
       FROM tasks t
      WHERE t.id = o.task_id AND o.task_id IN (
        SELECT task_id FROM task_outbox WHERE published_at IS NULL
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING o.task_id, o.kind, o.message, o.offers > 1 AS again`,
    [limit],
  );
  return rows.map((r) => ({ task_id: r.task_id, kind: r.kind, body: r.message, again: r.again }));
}

/**
 * Offers again, through the outbox, the oldest waiting task of each project and kind that has a
 * bound on its running tasks (its own, else `runningTasksLimit`; 0: none), runs fewer than it,
 * and has neither claimed a task nor had the task's message go out for `afterSeconds`. A slot
 * passes such a task over while its project is at the bound, and the slot its project frees takes
 * it; if that slot's process died first, nothing else would wake it. It starts from the bounded
 * projects, each looked up by the waiting tasks' index: with no deployment bound, it reads only the
 * projects that set their own. The ids offered.
 */
export async function offerPassedOverTasks(
  db: Queryable,
  afterSeconds: number,
  runningTasksLimit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ task_id: string }>(
    `WITH bounded AS (
       SELECT p.id AS project_id, k.kind, coalesce(p.running_tasks_limit, nullif($2, 0)) AS bound
         FROM projects p CROSS JOIN unnest($3::text[]) AS k (kind)
        WHERE coalesce(p.running_tasks_limit, nullif($2, 0)) IS NOT NULL),
     passed AS (
       SELECT w.id FROM bounded b
         LEFT JOIN project_claims c ON c.project_id = b.project_id AND c.kind = b.kind
         CROSS JOIN LATERAL (
           SELECT t.id FROM tasks t JOIN task_outbox o ON o.task_id = t.id
            WHERE t.project_id = b.project_id AND t.kind = b.kind AND t.status = 'pending'
              AND t.owner IS NULL AND o.published_at < clock_timestamp() - $1 * interval '1 second'
            ORDER BY t.created_at LIMIT 1) w
        WHERE (c.claimed_at IS NULL OR c.claimed_at < clock_timestamp() - $1 * interval '1 second')
          AND (SELECT count(*) FROM tasks r
                WHERE r.project_id = b.project_id AND r.kind = b.kind AND r.status = 'pending'
                  AND r.owner IS NOT NULL) < b.bound)
     UPDATE task_outbox o SET published_at = NULL FROM passed
      WHERE o.task_id = passed.id AND o.published_at IS NOT NULL
     RETURNING o.task_id`,
    [afterSeconds, runningTasksLimit, TASK_KINDS],
  );
  return rows.map((r) => r.task_id);
}
