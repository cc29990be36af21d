import type { BlobStorage } from './blob/blob-storage.js';
import type { TaskBus } from './bus/bus.js';
import { parseTaskMessage } from './bus/task-message.js';
import type { ServiceConfig } from './config.js';
import type { Pool } from './db/pool.js';
import { runExport } from './export/run-export.js';
import { runExportPart } from './export/split-export.js';
import { runImport } from './import/run-import.js';
import type { Logger } from './log.js';
import { taskRunner } from './tasks/run-task.js';
import type { SecretBox } from './tasks/task-secrets.js';

/** What the pipeline workers of a process stand on. */
export interface WorkerDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  readonly bus: TaskBus;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  readonly secrets: SecretBox;
  readonly log: Logger;
}

/**
 * Subscribes the import and export workers to the bus; each task runs through the one task
 * runner. They take no new message once the bus is closed, which is left to whoever opened it.
 */
export async function startWorkers({
  config,
  pool,
  bus,
  blobs,
  secrets,
  log,
}: WorkerDependencies): Promise<void> {
  const runner = taskRunner(pool, config, log);
  await bus.subscribe(
    'import',
    (message) =>
      runner.run('import', message.task_id, (run) => runImport(pool, config, secrets, message.body, run)),
    config.workerConcurrency,
  );
  const exports = { pool, blobs, bus, config };
  await bus.subscribe(
    'export',
    (message) => {
      // A part of a split export is not a task of its own: its coordinator's task runs it.
      const { part, blob } = parseTaskMessage(message.body) ?? {};
      return part === undefined || blob === undefined
        ? runner.run('export', message.task_id, (run) => runExport(exports, run))
        : runExportPart(exports, { blobName: blob, part }, log);
    },
    config.workerConcurrency,
  );
}
