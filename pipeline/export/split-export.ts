import type { ExportTaskOptions } from '../../schemas/index.js';
import { assertFileFits, BLOCK_BYTES, type BlobHeaders, type BlobStorage } from '../blob/blob-storage.js';
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
  nextRange,
  type PartState,
  partStates,
  planPart,
  releasePart,
  renewPart,
  type UserKey,
  type UserRange,
} from '../db/export-parts.js';
import type { Pool, PoolClient } from '../db/pool.js';
import { setProgressTotal } from '../db/tasks/progress.js';
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

// A split export: the worker that took the task (the coordinator) holds the snapshot and plans
// the users' ranges one at a time, each a part, publishing a message per part as it goes; any
// worker of the consumer group (the coordinator too) claims a part, reads its range under that
// snapshot and stages its blocks in the task's blob. The snapshot ends as soon as every part is
// staged: the coordinator then commits the block list in part order and digests the file outside
// it. A worker that dies mid-part stops renewing its lease, and the part is written again, whole,
// by the next claim; one that stops (drains) gives its part back at once. A coordinator that dies
// or stops takes the snapshot with it, and the task starts over in another worker; the parts of
// its attempt can no longer be claimed or renewed.
/** What an export's work stands on. */
export interface ExportDependencies {
  readonly pool: Pool;
  /** A hot standby exports read once it has replayed past their request (read-source.ts). */
  readonly reads?: Pool | undefined;
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

/** The parts planned so far, and whether the plan is whole (every user is in a part). */
interface Plan {
  parts: number;
  users: number;
  whole: boolean;
  failure?: unknown;
}

/** A split export's staged file: its blocks in order, and how many users they hold. */
export interface StagedParts {
  readonly blockIds: string[];
  readonly records: number;
}

/**
 * Writes the export prepared on `client` with `settings` as parts, the first ending where `first`
 * does, and returns their blocks once every part is staged. Run by the coordinator, inside the
 * snapshot's transaction, which the caller ends before committing the blocks (commitParts).
 */
export async function stageParts(
  deps: ExportDependencies,
  storage: BlobStorage,
  client: PoolClient,
  run: TaskRun,
  settings: SnapshotSettings,
  file: { readonly blobName: string; readonly first: UserRange; readonly onStandby: boolean },
): Promise<StagedParts> {
  const taskId = run.task.id;
  const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
  const snapshot = rows[0]?.id as string;
  const plan: Plan = { parts: 0, users: 0, whole: false };
  const addPart = async (after: UserKey | undefined, range: UserRange) => {
    const part = plan.parts;
    await planPart(deps.pool, {
      taskId,
      blobName: file.blobName,
      snapshot,
      coordinator: WORKER,
      taskAttempt: run.task.attempt,
      part,
      onStandby: file.onStandby,
      after,
      through: range.through,
    });
    plan.parts += 1;
    plan.users += range.users;
    // Helpers are welcome, not needed: the coordinator writes every part nobody else takes.
    await deps.bus.publish(exportPartMessage(taskId, file.blobName, part)).catch((err: unknown) => {
      run.log.warn({ err, part }, 'export part message not published; the coordinator writes it');
    });
  };
  await addPart(undefined, file.first);
  // The rest of the plan is walked on the snapshot's own connection while the first parts are
  // written; the progress's total is known once it is whole.
  const stopped = new AbortController();
  const planning = (async () => {
    const users = exportedUsersSql(settings);
    for (let after = file.first.through; after !== undefined && !stopped.signal.aborted; ) {
      const range = await nextRange(client, users, deps.config.export.partUsers, after);
      await addPart(after, range);
      after = range.through;
    }
    if (stopped.signal.aborted) return;
    await setProgressTotal(deps.pool, run.task, plan.users, { keepProcessed: true });
    plan.whole = true;
    run.log.info({ parts: plan.parts, users: plan.users }, 'export split into parts');
  })().catch((err: unknown) => {
    plan.failure = err;
  });
  // The users the parts have written so far are the export's progress; a missed look is retried.
  const progress = keepBeating(async () => {
    const states = await partStates(deps.pool, file.blobName);
    run.progress(states.reduce((sum, s) => sum + s.processed, 0));
  }, PART_RENEW_MS);
  try {
    const blockIds = await workUntilStaged(deps, storage, run, file.blobName, plan);
    return { blockIds, records: plan.users };
  } finally {
    stopped.abort();
    progress.stop();
    await planning; // the snapshot's connection is free again before its transaction ends
    await deleteParts(deps.pool, file.blobName).catch(() => {});
  }
}

/**
 * Commits a split export's staged blocks as its file and digests it, read back once: run after
 * the snapshot ended, since several workers wrote the parts.
 */
export async function commitParts(
  storage: BlobStorage,
  run: TaskRun,
  file: { readonly blobName: string; readonly headers: BlobHeaders; readonly blockIds: string[] },
): Promise<FileDigest> {
  await storage.commitBlocks(file.blobName, file.blockIds, file.headers);
  return digestOf(await storage.read(file.blobName, run.signal), run.advanced);
}

/** Writes parts until none is left to claim, then waits for the others'; the blocks in order. */
async function workUntilStaged(
  deps: ExportDependencies,
  storage: BlobStorage,
  run: TaskRun,
  blobName: string,
  plan: Plan,
): Promise<string[]> {
  const options = exportTaskOptions(run.task.options);
  for (;;) {
    run.signal.throwIfAborted();
    if (plan.failure !== undefined) throw plan.failure;
    const claimed = await claimFor(deps, blobName);
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
    if (plan.whole) {
      assertFileFits(projectedBlocks(states, plan));
      if (states.length === plan.parts && states.every((s) => s.block_ids !== null))
        return states.flatMap((s) => s.block_ids ?? []);
    }
    await pause();
  }
}

/**
 * The blocks the whole file will need, projected from the parts staged so far: their blocks, the
 * rest's users at the staged parts' bytes per user, and one partly filled block per part left.
 */
export function projectedBlocks(states: readonly PartState[], plan: Pick<Plan, 'parts' | 'users'>): number {
  const staged = states.filter((s) => s.block_ids !== null);
  const users = staged.reduce((sum, s) => sum + s.processed, 0);
  if (users === 0) return 0;
  const bytes = staged.reduce((sum, s) => sum + (s.bytes ?? 0), 0);
  const blocks = staged.reduce((sum, s) => sum + (s.block_ids?.length ?? 0), 0);
  const left = plan.users - users;
  return blocks + Math.ceil((left * bytes) / users / BLOCK_BYTES) + (plan.parts - staged.length);
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PART_POLL_MS));

/**
 * Claims a part of the plan for this worker (`part`, or the first free one), under the deployment's
 * cap on export readers, where this worker can read its snapshot.
 */
function claimFor(
  deps: ExportDependencies,
  blobName: string,
  part?: number,
): Promise<ExportPart | undefined> {
  return claimPart(deps.pool, {
    blobName,
    ...(part === undefined ? {} : { part }),
    worker: WORKER,
    leaseMs: PART_LEASE_MS,
    readersMax: deps.config.export.readersMax,
    standby: deps.reads !== undefined,
  });
}

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
  const claimed = await claimFor(deps, blobName, part);
  if (!claimed) {
    log.debug({ blob: blobName, part }, 'export part already taken, or every export reader busy');
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
    // A part is read where its coordinator's snapshot lives (claimed only where it can be).
    const staged = await withSnapshot(
      (part.on_standby ? deps.reads : undefined) ?? deps.pool,
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
        const { value: blockIds, digest } = await writeRecords(client, settings, options, {
          totpIssuer: project.publicOrigin,
          header: part.part === 0,
          progress: (n) => (processed = n),
          signal,
          sink: (file) => storage.stageBlocks(part.blob_name, file, blockPrefix(part), signal),
        });
        return { blockIds, processed, bytes: digest.bytes };
      },
      { snapshot: part.snapshot },
    );
    return (await finishPart(deps.pool, part, staged)) ? 'staged' : 'lost';
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
