import type { ExportTaskOptions } from '../../schemas/index.js';
import type { BlobHeaders, BlobStorage } from '../blob/blob-storage.js';
import { digestOf, type FileDigest } from '../blob/file-digest.js';
import { requireExportStorage } from '../blob/open-blob-storage.js';
import type { TakenTask, TaskBus } from '../bus/bus.js';
import { exportPartMessage } from '../bus/task-message.js';
import type { ServiceConfig } from '../config.js';
import {
  claimPart,
  deleteParts,
  type ExportPart,
  failPart,
  finishPart,
  partBoundaries,
  partStates,
  planParts,
  releasePart,
  renewPart,
  type UserKey,
} from '../db/export-parts.js';
import type { Pool, PoolClient } from '../db/pool.js';
import { withSnapshot } from '../db/transaction.js';
import { AttemptLost, classifyFault, EngineError } from '../errors.js';
import { keepBeating } from '../keep-alive.js';
import type { Logger } from '../log.js';
import { type ProjectRegistry, taskProject } from '../projects/project-registry.js';
import { type TaskRun, WORKER } from '../tasks/run-task.js';
import { TaskStop } from '../tasks/task-lease.js';
import { exportTaskOptions } from '../tasks/task-options.js';
import { exportedUsersSql, prepareSnapshot, type SnapshotSettings } from './user-rows.js';
import { snapshotSettings, writeRecords } from './write-records.js';

// A split export: the worker that took the task (the coordinator) holds the snapshot, cuts the
// users into ranges and publishes a message per part; any worker of the consumer group (the
// coordinator too) claims a part, reads its range under that snapshot and stages its blocks in
// the task's blob; the coordinator commits the block list in part order. A worker that dies
// mid-part stops renewing its lease, and the part is written again, whole, by the next claim; one
// that stops (drains) gives its part back at once. A coordinator that dies or stops takes the
// snapshot with it, and the task starts over in another worker; the parts of its attempt can no
// longer be claimed or renewed.
/** What an export's work stands on. */
export interface ExportDependencies {
  readonly pool: Pool;
  readonly blobs: BlobStorage | undefined;
  readonly bus: TaskBus;
  readonly config: ServiceConfig;
  /** The deployment's projects: a file's TOTP issuer is its project's origin. */
  readonly projects: Pick<ProjectRegistry, 'get' | 'refresh'>;
}

/** How long a claimed part stays its worker's without a renewal, and how often it is renewed. */
const PART_LEASE_MS = 5_000;
const PART_RENEW_MS = 500;
/** How often the coordinator looks at the parts it is waiting for. */
const PART_POLL_MS = 250;

/**
 * Writes the export prepared on `client` with `settings` (its `total` users) as parts, and commits
 * the file once every part is staged. Run by the coordinator, inside the snapshot's transaction,
 * which stays open until then.
 */
export async function coordinateParts(
  deps: ExportDependencies,
  storage: BlobStorage,
  client: PoolClient,
  run: TaskRun,
  settings: SnapshotSettings,
  file: { readonly blobName: string; readonly headers: BlobHeaders; readonly total: number },
): Promise<FileDigest> {
  const taskId = run.task.id;
  const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
  const users = exportedUsersSql(settings);
  const boundaries = await partBoundaries(client, users, deps.config.export.partUsers, file.total);
  const parts = await planParts(deps.pool, {
    taskId,
    blobName: file.blobName,
    snapshot: rows[0]?.id as string,
    coordinator: WORKER,
    taskAttempt: run.task.attempt,
    boundaries,
  });
  run.log.info({ parts }, 'export split into parts');
  // The users the parts have written so far are the export's progress; a missed look is retried.
  const progress = keepBeating(async () => {
    const states = await partStates(deps.pool, file.blobName);
    run.progress(states.reduce((sum, s) => sum + s.processed, 0));
  }, PART_RENEW_MS);
  try {
    // Helpers are welcome, not needed: the coordinator writes every part nobody else takes.
    for (let part = 0; part < parts; part++)
      await deps.bus.publish(exportPartMessage(taskId, file.blobName, part)).catch((err: unknown) => {
        run.log.warn({ err, part }, 'export part message not published; the coordinator writes it');
      });
    const blockIds = await workUntilStaged(deps, storage, run, file.blobName);
    await storage.commitBlocks(file.blobName, blockIds, file.headers);
    // Parts were written by several workers: the whole file is digested once, read back.
    return await digestOf(await storage.read(file.blobName, run.signal), run.advanced);
  } finally {
    progress.stop();
    await deleteParts(deps.pool, file.blobName).catch(() => {});
  }
}

/** Writes parts until none is left to claim, then waits for the others'; the blocks in order. */
async function workUntilStaged(
  deps: ExportDependencies,
  storage: BlobStorage,
  run: TaskRun,
  blobName: string,
): Promise<string[]> {
  const options = exportTaskOptions(run.task.options);
  for (;;) {
    run.signal.throwIfAborted();
    const claimed = await claimPart(deps.pool, {
      blobName,
      worker: WORKER,
      leaseMs: PART_LEASE_MS,
    });
    if (claimed) {
      // A part given back for a fault that may pass is claimed again after a pause.
      if ((await writePart(deps, storage, claimed, options, run.signal)) === 'given back') await pause();
      continue;
    }
    const states = await partStates(deps.pool, blobName);
    if (states.length === 0) throw new EngineError('ExportPartsGone', 'the parts of this export are gone'); // never commit nothing
    const failed = states.find((s) => s.failure !== null);
    if (failed)
      throw new EngineError(
        'ExportPartFailed',
        `export part ${failed.part} could not be written (${failed.failure})`,
      );
    if (states.every((s) => s.block_ids !== null)) return states.flatMap((s) => s.block_ids ?? []);
    await pause();
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PART_POLL_MS));

/**
 * Takes a part's message: claims the part if nobody holds it (it may be done, or taken) and
 * writes it, until done or until `draining` (the part is then given back).
 */
export async function takeExportPart(
  deps: ExportDependencies,
  { blobName, part }: { readonly blobName: string; readonly part: number },
  { log, draining }: { readonly log: Logger; readonly draining: AbortSignal },
): Promise<TakenTask | undefined> {
  if (draining.aborted) throw new TaskStop('draining'); // not taken: the message comes again
  const storage = requireExportStorage(deps.blobs);
  const claimed = await claimPart(deps.pool, { blobName, part, worker: WORKER, leaseMs: PART_LEASE_MS });
  if (!claimed) {
    log.debug({ blob: blobName, part }, 'export part already taken');
    return undefined;
  }
  const started = Date.now();
  const options = exportTaskOptions(claimed.options);
  const finished = writePart(deps, storage, claimed, options, draining).then((outcome) => {
    log.info(
      { task_id: claimed.task_id, part, attempt: claimed.attempt, outcome, ms: Date.now() - started },
      'export part',
    );
  });
  return { finished };
}

/**
 * Reads one part's users under the coordinator's snapshot and stages them as blocks, renewing
 * the part's lease as it goes. A fault that may pass gives the part back, and so does `outer`
 * (the coordinator stopped, or this worker drains); any other fault marks it failed. An attempt
 * that lost its part (its lease ran out, or the export ended) stops and keeps nothing: its blocks
 * are never committed. Never rejects.
 */
async function writePart(
  deps: ExportDependencies,
  storage: BlobStorage,
  part: ExportPart,
  options: ExportTaskOptions,
  outer?: AbortSignal,
): Promise<'staged' | 'lost' | 'given back' | 'failed'> {
  const lost = new AbortController();
  const signal = outer ? AbortSignal.any([outer, lost.signal]) : lost.signal;
  let processed = 0;
  // A missed renewal is harmless; the work itself meets the outage.
  const renewal = keepBeating(async () => {
    if (!(await renewPart(deps.pool, part, processed, PART_LEASE_MS)))
      lost.abort(new AttemptLost('the part was taken over, or its export ended'));
  }, PART_RENEW_MS);
  try {
    const blockIds = await withSnapshot(
      deps.pool,
      async (client) => {
        const settings: SnapshotSettings = {
          ...snapshotSettings(options),
          part: {
            after: keyOf(part.after_at, part.after_id),
            through: keyOf(part.through_at, part.through_id),
          },
        };
        await prepareSnapshot(client, part.project_id, settings);
        const project = await taskProject(deps.projects, part.project_id);
        const { value: ids } = await writeRecords(client, settings, options, {
          totpIssuer: project.publicOrigin,
          header: part.part === 0,
          progress: (n) => (processed = n),
          signal,
          sink: (file) => storage.stageBlocks(part.blob_name, file, blockPrefix(part), signal),
        });
        return ids;
      },
      { snapshot: part.snapshot },
    );
    return (await finishPart(deps.pool, part, blockIds, processed)) ? 'staged' : 'lost';
  } catch (err) {
    if (lost.signal.aborted) return 'lost';
    const fault = classifyFault(err);
    if (outer?.aborted || fault.kind === 'transient') {
      await releasePart(deps.pool, part).catch(() => {});
      return 'given back';
    }
    await failPart(deps.pool, part, fault.code ?? 'unexpected').catch(() => {});
    return 'failed';
  } finally {
    renewal.stop();
  }
}

function keyOf(at: string | null, id: string | null): UserKey | undefined {
  return at === null || id === null ? undefined : { at, id };
}

/** Block ids of one length across the blob: the part and the attempt, then the block's number. */
function blockPrefix(part: ExportPart): string {
  return `${String(part.part).padStart(6, '0')}-${String(part.attempt).padStart(6, '0')}`;
}
