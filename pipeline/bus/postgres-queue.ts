import { setTimeout as sleep } from 'node:timers/promises';
import { type TaskKind, validateTaskMessage } from '../../schemas/index.js';
import type { Pool } from '../db/pool.js';
import { dequeueTask, enqueueTask, takeQueuedTask } from '../db/tasks.js';
import { withTransaction } from '../db/transaction.js';
import type { Logger } from '../log.js';
import type { TaskBus, TaskHandler } from './bus.js';

/** How long an idle worker waits between looks at the queue. */
const IDLE_POLL_MS = 250;

/**
 * The embedded task bus: a `task_queue` row per message. A worker holds the row's lock
 * (`FOR UPDATE SKIP LOCKED`) in an open transaction while it handles the task and deletes the row
 * when done; if the worker dies (or the database restarts), the lock goes with its connection and
 * the message is taken again.
 */
export function postgresQueueBus(pool: Pool, log: Logger): TaskBus {
  let closed = false;
  const loops: Promise<void>[] = [];

  async function takeOne(kind: TaskKind, handler: TaskHandler): Promise<boolean> {
    return withTransaction(pool, async (client) => {
      const taskId = await takeQueuedTask(client, kind);
      if (!taskId) return false;
      const message = { task_id: taskId, kind };
      if (validateTaskMessage(message)) await handler(message);
      else log.error({ task_id: taskId }, 'dropping a malformed task message');
      await dequeueTask(client, taskId);
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

  return {
    async publish(message) {
      await enqueueTask(pool, message);
    },
    async subscribe(kind, handler, concurrency = 1) {
      for (let n = 0; n < concurrency; n++) loops.push(loop(kind, handler));
    },
    async close() {
      closed = true;
      await Promise.all(loops);
    },
  };
}
