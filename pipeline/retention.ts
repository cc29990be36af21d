import type { Pool } from './db/pool.js';
import { deleteExpiredTasks } from './db/tasks.js';
import type { Logger } from './log.js';

const SWEEP_EVERY_MS = 60_000;

/** Deletes completed tasks past retention now and then every minute; returns a stop function. */
export function startRetentionSweeper(pool: Pool, retentionSeconds: number, log: Logger): () => void {
  const sweep = () =>
    deleteExpiredTasks(pool, retentionSeconds).then(
      (ids) => ids.length > 0 && log.info({ tasks: ids.length }, 'expired tasks deleted'),
      (err) => log.error({ err }, 'retention sweep failed'),
    );
  void sweep();
  const timer = setInterval(sweep, Math.min(SWEEP_EVERY_MS, retentionSeconds * 1000));
  timer.unref();
  return () => clearInterval(timer);
}
