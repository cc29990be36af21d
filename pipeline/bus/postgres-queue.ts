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
import type { ImportLog, Subscription, TakenTask, TaskBus, TaskHandler } from './bus.js';

/** How long an idle worker waits between looks at the queue. */
const IDLE_POLL_MS = 250;
/** Logged messages read per query by a replay (each up to a whole import request). */
const LOG_PAGE = 8;
/** The embedded queue's one partition. */
const PARTITION = '0';

/**
 * The embedded task bus: a `task_queue` row per message (a task's, or a part of a split export's,
 * named by its key). Each of a kind's slots takes the oldest waiting row no other slot holds
 * (`FOR UPDATE SKIP LOCKED`), hands it to the handler and marks it processed in one transaction,
 * then waits for the work it started and takes the next waiting tasks without a message (the
 * handler's), before it takes another row. Processed import messages stay as
 * the import log; a message published again (a task offered again) is waiting again.
 */
export function postgresQueueBus(pool: Pool, log: Logger): TaskBus {
  let closed = false;
  const loops: Promise<void>[] = [];

  /** The message taken and the work it started; false when none was waiting. */
  async function takeOne(kind: TaskKind, handler: TaskHandler): Promise<TakenTask | undefined | false> {
    return withTransaction(pool, async (client) => {
      const queued = await takeQueuedMessage(client, kind);
      if (!queued) return false;
      const taken = await handler({ task_id: queued.task_id, kind, body: queued.message });
      await markProcessed(client, queued.message_key);
      return taken;
    });
  }

  /** Runs the next waiting tasks in a slot that just freed, one after another, while there are. */
  async function takeWaiting(kind: TaskKind, handler: TaskHandler, stopped: () => boolean): Promise<void> {
    while (!closed && !stopped()) {
      const taken = await handler(undefined).catch((err) => {
        log.warn({ err, kind }, 'the next waiting task not taken; the slot waits for messages');
        return undefined;
      });
      if (!taken) return;
      await taken.finished;
    }
  }

  async function loop(kind: TaskKind, handler: TaskHandler, stopped: () => boolean): Promise<void> {
    while (!closed && !stopped()) {
      const taken = await takeOne(kind, handler).catch((err) => {
        log.warn({ err, kind }, 'task queue unavailable, or a message not taken; it stays queued');
        return false as const;
      });
      if (taken) {
        await taken.finished;
        await takeWaiting(kind, handler, stopped);
      } else if (taken === false && !closed && !stopped()) await sleep(IDLE_POLL_MS);
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
            again: false, // a message offered again is the same row, waiting again
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
    async subscribe(kind, handler, concurrency = 1): Promise<Subscription> {
      let stopped = false;
      const mine = Array.from({ length: concurrency }, () => loop(kind, handler, () => stopped));
      loops.push(...mine);
      return {
        async stop() {
          stopped = true;
        },
      };
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
