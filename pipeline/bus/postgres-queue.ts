import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskKind } from '../../schemas/index.js';
import type { Pool } from '../db/pool.js';
import {
  countQueueLog,
  countWaiting,
  enqueueMessage,
  markProcessed,
  queueEndPosition,
  queuePositionAt,
  readQueueLog,
  takeQueuedMessage,
} from '../db/task-queue.js';
import { withTransaction } from '../db/transaction.js';
import type { Logger } from '../log.js';
import type { ImportLog, TaskBus, TaskHandler } from './bus.js';

/** How long an idle worker waits between looks at the queue. */
const IDLE_POLL_MS = 250;
/** Logged messages read per query by a replay (each up to a whole import request). */
const LOG_PAGE = 8;
/** The embedded queue's one partition. */
const PARTITION = '0';

/**
 * The embedded task bus: a `task_queue` row per message (a task's, or a part of a split export's,
 * named by its key). A worker holds the row's lock
 * (`FOR UPDATE SKIP LOCKED`) in an open transaction while it handles the task and marks the row
 * processed when done; if the worker dies (or the database restarts), the lock goes with its
 * connection and the message is taken again. Processed import messages stay as the import log.
 */
export function postgresQueueBus(pool: Pool, log: Logger): TaskBus {
  let closed = false;
  const loops: Promise<void>[] = [];

  async function takeOne(kind: TaskKind, handler: TaskHandler): Promise<boolean> {
    return withTransaction(pool, async (client) => {
      const queued = await takeQueuedMessage(client, kind);
      if (!queued) return false;
      await handler({ task_id: queued.task_id, kind, body: queued.message });
      await markProcessed(client, queued.message_key);
      return true;
    });
  }

  async function loop(kind: TaskKind, handler: TaskHandler): Promise<void> {
    while (!closed) {
      const worked = await takeOne(kind, handler).catch((err) => {
        log.warn({ err, kind }, 'task queue unavailable, or a task failed; it stays queued');
        return false;
      });
      if (!worked && !closed) await sleep(IDLE_POLL_MS);
    }
  }

  const importLog: ImportLog = {
    async offsetsAt(point) {
      const position =
        'time' in point ? await queuePositionAt(pool, 'import', point.time) : BigInt(point.offset).toString();
      return { [PARTITION]: position };
    },
    async endOffsets() {
      return { [PARTITION]: await queueEndPosition(pool) };
    },
    async count(from, to) {
      return countQueueLog(pool, 'import', from[PARTITION] ?? '0', to[PARTITION] ?? '0');
    },
    async read(_group, from, to, onMessage, signal) {
      let next = from[PARTITION] ?? '0';
      const end = to[PARTITION] ?? '0';
      while (!signal?.aborted && BigInt(next) < BigInt(end)) {
        const rows = await readQueueLog(pool, 'import', next, end, LOG_PAGE);
        if (rows.length === 0) return;
        for (const row of rows) {
          if (signal?.aborted) return;
          await onMessage({
            partition: PARTITION,
            offset: row.position,
            timestamp: row.enqueued_at,
            body: row.message,
          });
          next = (BigInt(row.position) + 1n).toString();
        }
      }
    },
  };

  return {
    async publish(message) {
      await enqueueMessage(pool, message.task_id, message.kind, message.body, message.key);
    },
    async subscribe(kind, handler, concurrency = 1) {
      for (let n = 0; n < concurrency; n++) loops.push(loop(kind, handler));
    },
    async check() {
      await queueEndPosition(pool);
    },
    async lag() {
      return (await countWaiting(pool)).map(({ kind, n }) => ({ kind, partition: PARTITION, lag: n }));
    },
    importLog,
    async close() {
      closed = true;
      await Promise.all(loops);
    },
  };
}
