import { setTimeout as sleep } from 'node:timers/promises';
import { releaseReader, renewReader, takeReader } from '../db/export-readers.js';
import { keepBeating } from '../keep-alive.js';
import { type TaskRun, WORKER } from '../tasks/run-task.js';
import type { ExportDependencies } from './split-export.js';

/** How long a held reader stays held without a renewal, how often it is renewed, and looked for. */
const READER_LEASE_MS = 5_000;
const READER_RENEW_MS = 500;
const READER_POLL_MS = 250;

/** One of the deployment's export readers, held by this export's coordinator. */
export interface HeldReader {
  /** Gives it back (once; a lapsed lease frees it too). */
  release(): Promise<void>;
}

/**
 * Waits for one of the deployment's export readers (EXPORT_READERS_MAX, shared with the parts
 * being written) and holds it, renewed, until released. Taken before the export's snapshot, so that
 * an export waiting for its turn holds none. The wait is the deployment's queue, not a stall; the
 * export's time limit bounds it.
 */
export async function holdReader(deps: ExportDependencies, run: TaskRun): Promise<HeldReader> {
  const hold = { taskId: run.task.id, holder: WORKER };
  const { readersMax } = deps.config.export;
  for (
    let waited = false;
    !(await takeReader(deps.pool, { ...hold, leaseMs: READER_LEASE_MS, readersMax }));
  ) {
    if (!waited)
      run.log.info({ readers_max: readersMax }, 'every export reader is busy; the export waits its turn');
    waited = true;
    run.advanced();
    await sleep(READER_POLL_MS, undefined, { signal: run.signal });
  }
  const renewal = keepBeating(() => renewReader(deps.pool, hold, READER_LEASE_MS), READER_RENEW_MS);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      renewal.stop();
      await releaseReader(deps.pool, hold).catch(() => {});
    },
  };
}
