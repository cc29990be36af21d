import type { TaskBus } from './bus/bus.js';
import type { ServiceConfig } from './config.js';
import type { Pool } from './db/pool.js';
import { runImport } from './import/run-import.js';
import type { Logger } from './log.js';
import { startRetentionSweeper } from './retention.js';

/** The running pipeline workers of one process. */
export interface Workers {
  stop(): Promise<void>;
}

/** Subscribes the import worker to the bus and starts the retention sweeper. */
export async function startWorkers(
  config: ServiceConfig,
  pool: Pool,
  bus: TaskBus,
  log: Logger,
): Promise<Workers> {
  await bus.subscribe(
    'import',
    (message) => runImport(pool, config, message.task_id, log),
    config.workerConcurrency,
  );
  const stopSweeper = startRetentionSweeper(pool, config.taskRetentionSeconds, log);
  return {
    async stop() {
      stopSweeper();
      await bus.close();
    },
  };
}
