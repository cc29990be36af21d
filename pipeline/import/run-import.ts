import { type Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { BusMessage, TakenTask, TaskBus } from '../bus/bus.js';
import { messageUpload } from '../bus/task-message.js';
import { type ServiceConfig, withProject } from '../config.js';
import { countFileFor, findUpload, framesFrom, type ImportFileRow } from '../db/import-files.js';
import type { Pool } from '../db/pool.js';
import { completeImport } from '../db/tasks/endings.js';
import { findPendingTask } from '../db/tasks/task-rows.js';
import { ApiError, EngineError } from '../errors.js';
import type { Logger } from '../log.js';
import { type ProjectRegistry, taskProject } from '../projects/project-registry.js';
import type { TaskRun } from '../tasks/run-task.js';
import { TaskStop } from '../tasks/task-lease.js';
import { importTaskOptions } from '../tasks/task-options.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { type ApplyTarget, applyBatch, committedTarget } from './apply-batch.js';
import { batchRecords } from './batch-records.js';
import { dryRun } from './dry-run.js';
import { type FramesRead, frameRecords } from './file-frames.js';
import { takeInFile } from './file-intake.js';
import { applyFileParts, identifierRoute, partsFor, takeImportPart } from './file-parts.js';
import type { ImportOptions } from './import-batch.js';
import { importedUserIds } from './imported-user-id.js';
import { recordStages } from './parse-records.js';
import { writeResultsFile } from './results-file.js';
import type { PreparedRecord } from './validate-record.js';
import { markRepeatedIdentifiers, recordValidator, validateRecords } from './validate-record.js';

/**
 * Runs (or resumes) an import task: the records of its message (secrets opened), or of its file
 * (taken in first: file-intake.ts) -> validation -> batches -> one transaction each (a dry run: one
 * savepoint each) -> results file -> summary.
 * Records an earlier attempt applied are skipped, so running it again is harmless; every batch is
 * fenced by the attempt (an attempt that lost the task writes nothing).
 */
export async function runImport(
  pool: Pool,
  config: ServiceConfig,
  secrets: SecretBox,
  blobs: BlobStorage | undefined,
  message: string,
  run: TaskRun,
  publish: (message: BusMessage) => Promise<void>,
): Promise<void> {
  const { task, signal, leaseMs } = run;
  const stored = importTaskOptions(task.options);
  const options = importOptionsOf(task, config);
  // The file its message names: its own, or (a replay) the one the replayed import took in.
  const upload = messageUpload(message);
  const file = upload === undefined ? undefined : await findUpload(pool, config.project.id, upload);
  if (upload !== undefined && (!file || (file.task_id !== task.id && file.records === null)))
    throw new ApiError('ImportFileGone', 'the file of this import is no longer kept');
  // The file as taken in: read once the take-in is done (its frames, its parts).
  let taken: ImportFileRow | undefined;
  if (file) {
    if (!blobs) throw new EngineError('ImportStorageMissing', 'a file import needs blob storage');
    await takeInFile(
      {
        pool,
        blobs,
        box: secrets,
        run,
        frameRecords: config.importBatchSize,
        retentionSeconds: config.importFiles.retentionSeconds,
        webhooks: config.webhooks,
        parts: partsFor(file.source?.bytes ?? 0, config, stored.dry_run === true),
        route: identifierRoute(options.validate, options.identifier),
      },
      file,
    );
    taken = (await findUpload(pool, file.project_id, file.upload_id)) ?? file;
    if (taken.task_id !== task.id) await countFileFor(pool, taken, task.id); // a replay's
    if ((taken.parts ?? 1) > 1) {
      await applyFileParts({ pool, blobs, box: secrets, config, publish }, run, taken, options);
      await completeImport(pool, task, await writeResultsFile(pool, blobs, run));
      return;
    }
  }
  const records = async (): Promise<(Readable | Duplex)[]> =>
    taken && blobs
      ? [await fileRecords(pool, blobs, secrets, taken, run), validateRecords(options.validate)]
      : [
          ...recordStages(message, secrets),
          validateRecords(options.validate),
          markRepeatedIdentifiers(options.identifier),
        ];
  const apply = async (target: ApplyTarget) =>
    pipeline([
      ...(await records()),
      batchRecords(config.importBatchSize, task.progress_processed),
      new Writable({
        objectMode: true,
        highWaterMark: 1,
        // A stop (a cancel, a drain) is seen between batches: the batch at hand is finished
        // and committed, and another worker goes on from the next.
        write(batch: PreparedRecord[], _enc, done) {
          if (signal.aborted) done(signal.reason as Error);
          else
            applyBatch(target, batch, options).then(() => {
              run.advanced();
              done();
            }, done);
        },
      }),
    ]);
  if (stored.dry_run) await dryRun(pool, task, leaseMs, apply);
  else await apply(committedTarget(pool, task, leaseMs));
  // Without blob storage (export switched off) the details alone tell the outcomes.
  const results = blobs ? await writeResultsFile(pool, blobs, run) : undefined;
  await completeImport(pool, task, results);
}

/** How a task's records are applied: its settings, in its project. */
function importOptionsOf(
  task: { readonly id: string; readonly options: unknown; readonly replay_of: string | null },
  config: ServiceConfig,
): ImportOptions {
  const stored = importTaskOptions(task.options);
  return {
    identifier: stored.identifier,
    upsert: stored.upsert,
    project: config.project,
    validate: recordValidator(stored.identifier, config.project),
    recordChanges: config.search.clickhouse !== undefined,
    lockUsers: !stored.dry_run,
    userIdOf: importedUserIds(task.replay_of ?? task.id),
    replayed: task.replay_of !== null,
  };
}

/** What a worker applying a part of another worker's file import stands on. */
export interface FilePartDependencies {
  readonly pool: Pool;
  readonly blobs: BlobStorage | undefined;
  readonly secrets: SecretBox;
  readonly config: ServiceConfig;
  readonly projects: Pick<ProjectRegistry, 'get' | 'refresh'>;
  readonly bus: Pick<TaskBus, 'publish'>;
  readonly log: Logger;
}

/**
 * Takes a part's message of a split file import (file-parts.ts): claims the part if nobody holds it
 * and applies it in the task's project, until done or until `draining` (the part is then given
 * back). Undefined when there is nothing to take (the part is done or held, the task ended).
 */
export async function takeFilePart(
  deps: FilePartDependencies,
  taskId: string,
  part: number,
  draining: AbortSignal,
): Promise<TakenTask | undefined> {
  if (draining.aborted) throw new TaskStop('draining'); // not taken: the message comes again
  const task = await findPendingTask(deps.pool, taskId);
  if (!task || !deps.blobs) return undefined;
  const config = withProject(deps.config, await taskProject(deps.projects, task.project_id));
  const partDeps = {
    pool: deps.pool,
    blobs: deps.blobs,
    box: deps.secrets,
    config,
    publish: deps.bus.publish,
  };
  const started = Date.now();
  const taken = await takeImportPart(
    partDeps,
    task,
    part,
    async (claimed) => {
      const file = await findUpload(deps.pool, task.project_id, claimed.upload_id);
      if (!file) throw new ApiError('ImportFileGone', 'the file of this import is no longer kept');
      return { file, options: importOptionsOf(task, config) };
    },
    draining,
  );
  if (!taken) return undefined;
  const finished = taken.outcome.then((result) => {
    deps.log.info({ task_id: taskId, part, outcome: result, ms: Date.now() - started }, 'import part');
  });
  return { finished };
}

/**
 * The records of a file import's sealed copy from the task's resume point on: one ranged read from
 * the frame that holds it (file-frames.ts), in file order. The identifiers a file repeats are not
 * marked: that would hold every identifier of the file, and its records apply in file order anyway.
 */
async function fileRecords(
  pool: Pool,
  blobs: BlobStorage,
  secrets: SecretBox,
  file: ImportFileRow,
  run: TaskRun,
): Promise<Readable> {
  const from = run.task.progress_processed;
  const frames = await framesFrom(pool, file, from);
  const read: FramesRead = { sealedStart: frames[0]?.sealed_start ?? 0, reread: 0 };
  run.log.info({ from, sealed_start: read.sealedStart, frames: frames.length }, 'reading the file');
  const records = Readable.from(frameRecords(blobs, secrets, file, frames, from, read, run.signal), {
    objectMode: true,
    highWaterMark: 64,
  });
  records.once('end', () => run.log.info({ reread: read.reread }, 'file read'));
  return records;
}
