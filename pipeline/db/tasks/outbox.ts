import type { BusMessage } from '../../../schemas/bus-message.js';
import type { TaskKind } from '../../../schemas/index.js';
import type { PoolClient, Queryable } from '../pool.js';

/**
 * Takes up to `limit` unpublished messages of the outbox for the caller's transaction: marked
 * published once it commits (after publishing them), unpublished again if it rolls back. Rows
 * another relay holds are skipped. A message stays until its task ends (the trigger of sql/018),
 * to be offered again when a lease lapses; one offered again says so (`again`).
 */
export async function takeOutboxMessages(client: PoolClient, limit: number): Promise<BusMessage[]> {
  const { rows } = await client.query<{ task_id: string; kind: TaskKind; message: string; again: boolean }>(
    `UPDATE task_outbox o SET published_at = clock_timestamp()
       FROM tasks t
      WHERE t.id = o.task_id AND o.task_id IN (
        SELECT task_id FROM task_outbox WHERE published_at IS NULL
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING o.task_id, o.kind, o.message, t.attempt > 0 AS again`,
    [limit],
  );
  return rows.map((r) => ({ task_id: r.task_id, kind: r.kind, body: r.message, again: r.again }));
}
