import { setMaxListeners } from 'node:events';
import type { TaskKind } from '../schemas/index.js';
import type { BlobStorage } from './blob/blob-storage.js';
import type { Subscription, TakenTask, TaskBus, TaskHandler } from './bus/bus.js';
import { messagePart, parseTaskMessage } from './bus/task-message.js';
import { type ServiceConfig, withProject } from './config.js';
import type { Pool } from './db/pool.js';
import { runExport } from './export/run-export.js';
import { takeExportPart } from './export/split-export.js';
import { importRunning } from './heap-growth.js';
import { runImport, takeFilePart } from './import/run-import.js';
import type { Logger } from './log.js';
import { type ProjectRegistry, taskProject } from './projects/project-registry.js';
import { taskRunner } from './tasks/run-task.js';
import type { SecretBox } from './tasks/task-secrets.js';

/** What the pipeline workers of a process stand on. */
export interface WorkerDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  /** A hot standby the exports read (DATABASE_READ_URL); undefined without one. */
  readonly reads?: Pool | undefined;
  readonly bus: TaskBus;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  readonly secrets: SecretBox;
  /** The deployment's projects: each task runs with its own project's settings. */
  readonly projects: Pick<ProjectRegistry, 'get' | 'refresh'>;
  readonly log: Logger;
}

/**
 * Connections the workers of a process may hold at once, for `concurrency` tasks of each kind (the
 * parts of a split export count as export tasks): per task, the embedded bus's queue transaction,
 * the task's own connection (an import's batch, an export's snapshot or part) and one for its
 * lease renewals and status writes. A pool smaller than this lets the running tasks take every
 * connection and wait on each other until its connect timeout fails them.
 */
export function workerConnections(concurrency: number): number {
  return 2 * concurrency * 3;
}

/** The pipeline workers of a process. */
export interface Workers {
  /** Subscribes the import and export workers to the bus. */
  start(): Promise<void>;
  /** Tasks and export parts running in this process, by kind. */
  running(): Readonly<Record<TaskKind, number>>;
  /** Whether they have subscribed to both kinds and claim tasks (not draining). */
  claiming(): boolean;
  /**
   * Drains (also while starting): takes no more messages, stops every running task at its next
   * safe point (an import after the batch at hand) and releases it for another worker, and gives
   * back the export parts it was writing. Resolves once all of them have.
   */
  stop(): Promise<void>;
}

/**
 * The import and export workers of a process; each task runs through the one task runner. The bus
 * itself is left open (closed by whoever opened it).
 */
export function pipelineWorkers({
  config,
  pool,
  reads,
  bus,
  blobs,
  secrets,
  projects,
  log,
}: WorkerDependencies): Workers {
  const draining = new AbortController();
  // Every running task and export part listens to it: as many as the slots, past Node's default warning.
  setMaxListeners(0, draining.signal);
  const running = { import: new Set<Promise<void>>(), export: new Set<Promise<void>>() };
  const counted = (kind: TaskKind, taken: TakenTask | undefined) => {
    if (taken) {
      running[kind].add(taken.finished);
      const release = kind === 'import' ? importRunning(config.importHeapGrowingPercent) : () => {};
      void taken.finished.finally(() => {
        running[kind].delete(taken.finished);
        release();
      });
    }
    return taken;
  };
  const runner = taskRunner(pool, config, log, draining.signal);
  const exportDeps = { pool, reads, blobs, bus, config, projects };
  const handlers: Record<TaskKind, TaskHandler> = {
    import: async (message) => {
      // A part of a split file import is not a task of its own: it is leased in its part's row.
      const part = message ? messagePart(message.body) : undefined;
      const taken =
        message && part !== undefined
          ? await takeFilePart(
              { pool, blobs, secrets, config, projects, bus, log },
              message.task_id,
              part,
              draining.signal,
            )
          : await runner.take('import', message, async (run, body) => {
              const project = await taskProject(projects, run.task.project_id);
              await runImport(pool, withProject(config, project), secrets, blobs, body, run, (m) =>
                bus.publish(m),
              );
            });
      return counted('import', taken);
    },
    export: async (message) => {
      // A part of a split export is not a task of its own: it is leased in its part's row.
      const { part, blob } = (message && parseTaskMessage(message.body)) ?? {};
      const taken =
        part === undefined || blob === undefined
          ? await runner.take('export', message, (run) => runExport(exportDeps, run))
          : await takeExportPart(exportDeps, { blobName: blob, part }, { log, draining: draining.signal });
      return counted('export', taken);
    },
  };
  const subscriptions: Subscription[] = [];
  const kinds = ['import', 'export'] as const;
  let starting: Promise<void> = Promise.resolve();

  return {
    start() {
      starting = (async () => {
        for (const kind of kinds) {
          if (draining.signal.aborted) return;
          subscriptions.push(await bus.subscribe(kind, handlers[kind], config.workerConcurrency));
        }
      })();
      return starting;
    },
    running: () => ({ import: running.import.size, export: running.export.size }),
    claiming: () => subscriptions.length === kinds.length && !draining.signal.aborted,
    async stop() {
      // Draining first: a consumer takes seconds to leave its group, and the running tasks stop at
      // once while it does; a message that arrives meanwhile is not claimed (it comes again).
      draining.abort();
      await starting.catch(() => {});
      await Promise.all([...subscriptions.map((s) => s.stop()), ...running.import, ...running.export]);
    },
  };
}
