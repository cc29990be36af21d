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
 * Connections the workers of a process may hold at once, for `concurrency` tasks of each kind (the
 * parts of a split export count as export tasks): per task, the embedded bus's queue transaction,
 * the task's own connection (an import's batch, an export's snapshot or part) and one for its
 * heartbeat, lease and status writes. A pool smaller than this lets the running tasks take every
 * connection and wait on each other until its connect timeout fails them.
 */
export function workerConnections(concurrency: number): number {
  return 2 * concurrency * 3;
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
