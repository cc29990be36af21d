import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../db/pool.js';
import { standbyReplay } from '../db/standby.js';
import { requestedLsn } from '../db/tasks/admission.js';
import type { TaskRun } from '../tasks/run-task.js';
import type { ExportDependencies } from './split-export.js';

/** How often an export looks again at a standby that has not replayed past its request. */
const REPLAY_POLL_MS = 100;

/** The server an export reads its snapshot from. */
export interface ReadSource {
  readonly pool: Pool;
  readonly onStandby: boolean;
}

/**
 * Where the export reads: the standby (`deps.reads`) once it has replayed past the moment the
 * export was requested, so that the file holds every write acknowledged before the request; the
 * primary when there is no standby, when it stays behind for `export.standbyWaitSeconds`, when it
 * cannot be reached, or when it is no standby at all. Lookups never come here: they read the
 * primary, immediately consistent.
 */
export async function exportReadSource(deps: ExportDependencies, run: TaskRun): Promise<ReadSource> {
  const primary = { pool: deps.pool, onStandby: false };
  if (!deps.reads) return primary;
  const lsn = await requestedLsn(deps.pool, run.task);
  if (lsn === undefined) return primary;
  const deadline = Date.now() + deps.config.export.standbyWaitSeconds * 1000;
  for (;;) {
    run.signal.throwIfAborted();
    let replay: Awaited<ReturnType<typeof standbyReplay>>;
    try {
      replay = await standbyReplay(deps.reads, lsn);
    } catch (err) {
      run.log.warn({ err }, 'the standby cannot be reached; the export reads the primary');
      return primary;
    }
    if (replay === 'replayed') return { pool: deps.reads, onStandby: true };
    if (replay === 'not a standby') {
      run.log.warn('DATABASE_READ_URL names a server that is not a standby; the export reads the primary');
      return primary;
    }
    if (Date.now() >= deadline) {
      run.log.warn(
        { requested_lsn: lsn, waited_seconds: deps.config.export.standbyWaitSeconds },
        'the standby has not replayed past the export request; the export reads the primary',
      );
      return primary;
    }
    run.advanced(); // a wait bounded by standbyWaitSeconds, not a stall
    await sleep(REPLAY_POLL_MS, undefined, { signal: run.signal });
  }
}
