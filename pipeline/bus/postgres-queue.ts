import { setTimeout as sleep } from 'node:timers/promises';
import { type TaskKind, validateTaskMessage } from '../../schemas/index.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { TaskBus, TaskHandler } from './bus.js';

/** How long an idle worker waits between looks at the queue when no notification arrives. */
const IDLE_POLL_MS = 500;

/**
 * The embedded task bus: a `task_queue` row per message. A worker holds the row's lock
 * (`FOR UPDATE SKIP LOCKED`) in an open transaction while it handles the task and deletes the row
 * when done; if the worker dies, its connection closes, the lock goes, and another worker takes it.
 */
export function postgresQueueBus(pool: Pool, log: Logger): TaskBus {
  let closed = false;
  const loops: Promise<void>[] = [];

  async function takeOne(kind: TaskKind, handler: TaskHandler): Promise<boolean> {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ task_id: string }>(
        `SELECT task_id FROM task_queue WHERE kind = $1 ORDER BY enqueued_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [kind],
      );
      const taskId = rows[0]?.task_id;
      if (!taskId) {
        await client.query('COMMIT');
        return false;
      }
      const message = { task_id: taskId, kind };
      if (validateTaskMessage(message)) await handler(message);
      else log.error({ task_id: taskId }, 'dropping a malformed task message');
      await client.query('DELETE FROM task_queue WHERE task_id = $1', [taskId]);
      await client.query('COMMIT');
      return true;
    } catch (err) {
      broken = true;
      log.error({ err, kind }, 'task failed; it stays queued for another attempt');
      return false;
    } finally {
      // A failed handler leaves the row locked in an aborted transaction: drop the connection,
      // which rolls back and frees the row for the next attempt.
      client.release(broken);
    }
  }

  async function loop(kind: TaskKind, handler: TaskHandler): Promise<void> {
    while (!closed) {
      const worked = await takeOne(kind, handler).catch((err) => {
        log.error({ err }, 'task queue unavailable');
        return false;
      });
      if (!worked && !closed) await sleep(IDLE_POLL_MS);
    }
  }

  return {
    async publish(message) {
      await pool.query('INSERT INTO task_queue (task_id, kind) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        message.task_id,
        message.kind,
      ]);
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
