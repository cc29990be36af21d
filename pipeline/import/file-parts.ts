import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { BusMessage } from '../bus/bus.js';
import { importPartMessage } from '../bus/task-message.js';
import type { ServiceConfig } from '../config.js';
import { framesFrom, type ImportFileRow } from '../db/import-files.js';
import {
  claimImportPart,
  failImportPart,
  finishImportPart,
  type ImportPart,
  importPartStates,
  planImportParts,
  releaseImportPart,
  renewImportPart,
} from '../db/import-parts.js';
import type { Pool } from '../db/pool.js';
import { AttemptLost, classifyFault, EngineError } from '../errors.js';
import { KEY_OF_ATTRIBUTE } from '../identity/login-id-attributes.js';
import { keepBeating } from '../keep-alive.js';
import { type TaskRun, WORKER } from '../tasks/run-task.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { applyBatch, partTarget } from './apply-batch.js';
import { batchRecords } from './batch-records.js';
import { type FramesRead, frameRecords } from './file-frames.js';
import type { FileLine } from './file-lines.js';
import type { ImportOptions } from './import-batch.js';
import { type PreparedRecord, type RecordValidator, validateRecords } from './validate-record.js';

// A large file applied by several workers at once (docs/file-imports.md, Many workers on one file):
// taking it in routed each record by its identifier to one of the file's parts, so every record of
// one user is in one part; the worker that runs the task (the coordinator) records the parts,
// publishes a message per part, and applies parts itself until none is left to claim, then waits
// for the others'. A part is leased by one worker at a time and applied in file order from where
// its last batch committed; a worker that dies leaves its lease to lapse, one that drains gives the
// part back at once.

/** How long a claimed part stays its worker's without a renewal, and how often it is renewed. */
const PART_LEASE_MS = 6_000;
const PART_RENEW_MS = 500;
/** How often the coordinator looks at the parts it waits for. */
const PART_POLL_MS = 250;

/** What applying a file's parts stands on. */
export interface PartDependencies {
  readonly pool: Pool;
  readonly blobs: BlobStorage;
  readonly box: SecretBox;
  readonly config: ServiceConfig;
  readonly publish: (message: BusMessage) => Promise<void>;
}

/** The parts a file of `bytes` is routed to: one below IMPORT_FILE_PART_BYTES, and for a dry run. */
export function partsFor(bytes: number, config: ServiceConfig, dryRun: boolean): number {
  if (dryRun) return 1; // a dry run's savepoints live in one transaction
  return Math.max(1, Math.min(Math.ceil(bytes / config.importFiles.partBytes), config.importFiles.partsMax));
}

/**
 * The part of each record among `parts`: by the normalized value of the import's identifier, as
 * the worker matches it (the validator's login id), so that every record of one user falls in one
 * part. A record without one (it fails wherever it is applied) goes to part 0.
 */
export function identifierRoute(
  validate: RecordValidator,
  identifier: ImportOptions['identifier'],
): (parts: number, wrapped: boolean) => (line: FileLine) => number {
  const key = KEY_OF_ATTRIBUTE[identifier];
  return (parts, wrapped) => (line) => {
    if (!('text' in line)) return 0;
    let value: string | undefined;
    try {
      const parsed: unknown = JSON.parse(line.text);
      const checked = validate(wrapped ? (parsed as { r: unknown }).r : parsed);
      value = checked.ok ? checked.valid.loginIds.get(key)?.value : undefined;
    } catch {
      return 0;
    }
    return value === undefined ? 0 : fnv1a(value) % parts;
  };
}

/** The 32-bit FNV-1a hash of a text's UTF-16 code units: the same part for the same value, everywhere. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * The coordinator: records the file's parts (a coordinator that starts again finds them as they
 * were), asks every worker for help through the bus, applies parts until none is left to claim,
 * and returns once every part is applied; throws when one failed.
 */
export async function applyFileParts(
  deps: PartDependencies,
  run: TaskRun,
  file: ImportFileRow,
  options: ImportOptions,
): Promise<void> {
  const task = { project_id: run.task.project_id, id: run.task.id };
  const parts = file.parts ?? 1;
  await planImportParts(deps.pool, task, file.upload_id, parts);
  run.log.info({ parts }, 'file import split into parts');
  // The records the parts applied so far are the task's progress; a missed look is retried.
  const progress = keepBeating(async () => {
    const states = await importPartStates(deps.pool, task);
    run.progress(states.reduce((sum, s) => sum + s.applied, 0));
  }, PART_RENEW_MS);
  try {
    for (let part = 0; part < parts; part++)
      await deps.publish(importPartMessage(run.task.id, run.task.project_id, part)).catch((err: unknown) => {
        run.log.warn({ err, part }, 'import part message not published; the coordinator applies it');
      });
    for (;;) {
      run.signal.throwIfAborted();
      const claimed = await claimImportPart(deps.pool, task, { worker: WORKER, leaseMs: PART_LEASE_MS });
      if (claimed) {
        if ((await applyPart(deps, claimed, file, options, run.signal)) === 'given back') await pause();
        continue;
      }
      const states = await importPartStates(deps.pool, task);
      const failed = states.find((s) => s.failure !== null);
      if (failed)
        throw new EngineError(
          'ImportPartFailed',
          `part ${failed.part} of the file failed (${failed.failure})`,
        );
      if (states.length > 0 && states.every((s) => s.done)) return;
      // Waiting is not moving: the parts' applied records are (progress above). Parts that stop
      // moving stall the task, which another coordinator then takes over, or ends expired.
      await pause();
    }
  } finally {
    progress.stop();
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PART_POLL_MS));

/**
 * Takes a part's message: claims the part if nobody holds it (it may be done, or taken), reads what
 * applying it needs (`prepare`), and starts applying it until done or until `draining` (the part
 * is then given back). Undefined when there is nothing to claim; else the part's outcome, to come.
 */
export async function takeImportPart(
  deps: PartDependencies,
  task: { readonly project_id: string; readonly id: string },
  part: number,
  prepare: (claimed: ImportPart) => Promise<{ file: ImportFileRow; options: ImportOptions }>,
  draining: AbortSignal,
): Promise<{ outcome: Promise<'applied' | 'lost' | 'given back' | 'failed'> } | undefined> {
  const claimed = await claimImportPart(deps.pool, task, { worker: WORKER, leaseMs: PART_LEASE_MS, part });
  if (!claimed) return undefined;
  let prepared: { file: ImportFileRow; options: ImportOptions };
  try {
    prepared = await prepare(claimed);
  } catch (err) {
    await releaseImportPart(deps.pool, claimed).catch(() => {});
    throw err;
  }
  return { outcome: applyPart(deps, claimed, prepared.file, prepared.options, draining) };
}

/**
 * Applies one part from where its last batch committed, renewing its lease as it goes; every
 * batch is fenced by the part's attempt. A fault that may pass gives the part back, and so does
 * `outer` (the coordinator stopped, or this worker drains); any other fault marks it failed.
 * Never rejects.
 */
async function applyPart(
  deps: PartDependencies,
  part: ImportPart,
  file: ImportFileRow,
  options: ImportOptions,
  outer: AbortSignal,
): Promise<'applied' | 'lost' | 'given back' | 'failed'> {
  const lost = new AbortController();
  const signal = AbortSignal.any([outer, lost.signal]);
  const renewal = keepBeating(async () => {
    if (!(await renewImportPart(deps.pool, part, PART_LEASE_MS)))
      lost.abort(new AttemptLost('the part was taken over, or its import ended'));
  }, PART_RENEW_MS);
  try {
    const from = part.applied_through;
    const frames = await framesFrom(deps.pool, file, from, part.part);
    const read: FramesRead = { sealedStart: frames[0]?.sealed_start ?? 0, reread: 0 };
    const target = partTarget(deps.pool, part, PART_LEASE_MS);
    await pipeline([
      Readable.from(frameRecords(deps.blobs, deps.box, file, frames, from, read, signal), {
        objectMode: true,
        highWaterMark: 64,
      }),
      validateRecords(options.validate),
      batchRecords(deps.config.importBatchSize, from),
      new Writable({
        objectMode: true,
        highWaterMark: 1,
        write(batch: PreparedRecord[], _enc, done) {
          if (signal.aborted) done(signal.reason as Error);
          else applyBatch(target, batch, options).then(() => done(), done);
        },
      }),
    ]);
    await finishImportPart(deps.pool, part);
    return 'applied';
  } catch (err) {
    if (lost.signal.aborted) return 'lost';
    const fault = classifyFault(err);
    if (outer.aborted || fault.kind === 'transient') {
      await releaseImportPart(deps.pool, part).catch(() => {});
      return 'given back';
    }
    await failImportPart(deps.pool, part, fault.code ?? 'unexpected').catch(() => {});
    return 'failed';
  } finally {
    renewal.stop();
  }
}
