import type { TaskKind } from '../../schemas/index.js';
import type { PoolClient, Queryable } from './pool.js';

// Every statement on `task_queue`, the embedded task bus. It is also the import log of the
// embedded default: a handled message stays (processed) for the log's retention, at its position.

/**
 * Queues a message (a row per key); one queued before waits again, at its place in the log (a
 * task offered again: its worker died or released it). A message taken twice finds its task
 * taken or ended, and does nothing.
 */
export async function enqueueMessage(
  db: Queryable,
  taskId: string,
  kind: TaskKind,
  body: string,
  key: string = taskId,
): Promise<void> {
  await db.query(
    `INSERT INTO task_queue (task_id, kind, message, message_key) VALUES ($1, $2, $3, $4)
     ON CONFLICT (message_key) DO UPDATE SET processed_at = NULL`,
    [taskId, kind, body, key],
  );
}

/** A queued message as a worker takes it. */
export interface QueuedMessage {
  readonly task_id: string;
  readonly message_key: string;
  readonly message: string;
}

/**
 * The oldest waiting message of this kind that no other worker holds, locked for the caller's
 * transaction. It only wakes a slot: the task the slot takes is chosen by the claim (fair across
 * projects, db/tasks/leases.ts). A message whose task is gone is taken at once, and dropped.
 */
export async function takeQueuedMessage(
  client: PoolClient,
  kind: TaskKind,
): Promise<QueuedMessage | undefined> {
  const { rows } = await client.query<QueuedMessage>(
    `SELECT task_id, message_key, message FROM task_queue
      WHERE kind = $1 AND processed_at IS NULL
      ORDER BY position
      LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [kind],
  );
  return rows[0];
}

/** Marks a handled message processed: it is no longer delivered, and stays in the log. */
export async function markProcessed(client: PoolClient, messageKey: string): Promise<void> {
  await client.query('UPDATE task_queue SET processed_at = clock_timestamp() WHERE message_key = $1', [
    messageKey,
  ]);
}

/** The position of the first logged message of the kind at or after `time` (or the end). */
export async function queuePositionAt(db: Queryable, kind: TaskKind, time: Date): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    `SELECT coalesce(
       (SELECT min(position) FROM task_queue WHERE kind = $1 AND enqueued_at >= $2),
       (SELECT coalesce(max(position), 0) + 1 FROM task_queue))::text AS position`,
    [kind, time],
  );
  return rows[0]?.position ?? '1';
}

/** The position the next queued message will have, or more. */
export async function queueEndPosition(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    'SELECT (coalesce(max(position), 0) + 1)::text AS position FROM task_queue',
  );
  return rows[0]?.position ?? '1';
}

/** A logged message with its position and time. */
export interface QueueLogRow {
  readonly position: string;
  readonly enqueued_at: Date;
  readonly message: string;
}

/** Messages waiting in the queue, by kind (the embedded bus's one partition). */
export async function countWaiting(db: Queryable): Promise<{ kind: TaskKind; n: number }[]> {
  const { rows } = await db.query<{ kind: TaskKind; n: number }>(
    'SELECT kind, count(*)::int AS n FROM task_queue WHERE processed_at IS NULL GROUP BY kind ORDER BY kind',
  );
  return rows;
}

/** How many logged messages of the kind lie in [from, to). */
export async function countQueueLog(
  db: Queryable,
  kind: TaskKind,
  from: string,
  to: string,
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM task_queue WHERE kind = $1 AND position >= $2 AND position < $3',
    [kind, from, to],
  );
  return rows[0]?.n ?? 0;
}

/** Up to `limit` logged messages of the kind in [from, to), in order. */
export async function readQueueLog(
  db: Queryable,
  kind: TaskKind,
  from: string,
  to: string,
  limit: number,
): Promise<QueueLogRow[]> {
  const { rows } = await db.query<QueueLogRow>(
    // Ordered by the column, not by the text the select names the same: positions are numbers.
    `SELECT q.position::text AS position, q.enqueued_at, q.message FROM task_queue q
      WHERE q.kind = $1 AND q.position >= $2 AND q.position < $3 ORDER BY q.position LIMIT $4`,
    [kind, from, to, limit],
  );
  return rows;
}

/**
 * Deletes processed messages past their keep: exports' at once (they are no log), imports' after
 * the log's retention. Returns how many went.
 */
export async function sweepQueueLog(db: Queryable, importLogSeconds: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM task_queue WHERE processed_at IS NOT NULL
        AND (kind <> 'import' OR processed_at <= clock_timestamp() - make_interval(secs => $1))`,
    [importLogSeconds],
  );
  return rowCount ?? 0;
}
