import type { BlobStorage } from './blob/blob-storage.js';
import type { TaskBus } from './bus/bus.js';
import type { ServiceConfig } from './config.js';
import type { Pool } from './db/pool.js';
import { runExport } from './export/run-export.js';
import { runImport } from './import/run-import.js';
import type { Logger } from './log.js';
import { startRetentionSweeper } from './retention.js';

/** The running pipeline workers of one process. */
export interface Workers {
  /**
   * Stops the retention sweeper. The workers take no new message once their bus is closed, which
   * is left to whoever opened the bus, after this.
   */
  stop(): Promise<void>;
}

/**
 * Subscribes the import and export workers to the bus and starts the retention sweeper. `blobs`
 * is the export files' storage, undefined when export is disabled.
 */
export async function startWorkers(
  config: ServiceConfig,
  pool: Pool,
  bus: TaskBus,
  blobs: BlobStorage | undefined,
  log: Logger,
): Promise<Workers> {
  await bus.subscribe(
    'import',
    (message) => runImport(pool, config, message.task_id, log),
    config.workerConcurrency,
  );
  await bus.subscribe(
    'export',
    (message) => runExport(pool, blobs, config, message.task_id, log),
    config.workerConcurrency,
  );
  const stopSweeper = startRetentionSweeper(pool, blobs, config.taskRetentionSeconds, log);
  return {
    async stop() {
      stopSweeper();
    },
  };
}
