import { copyRows } from '../db/copy-rows.js';
import { advanceImportPart, type ImportPart, lockImportPart } from '../db/import-parts.js';
import type { Pool, PoolClient } from '../db/pool.js';
import type { TaskAttempt } from '../db/tasks/leases.js';
import { lockImportProgress, saveImportProgress } from '../db/tasks/progress.js';
import { withTransaction } from '../db/transaction.js';
import { recordUserChanges } from '../db/user-changes.js';
import { ApiError, classifyFault, envelopeError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { importRecords } from '../operator/metrics.js';
import { storableJson } from '../storable-text.js';
import type { ImportDetail, ImportOptions } from './import-batch.js';
import { loadBatchState } from './load-batch-state.js';
import { planBatch } from './plan-batch.js';
import { redactRecord } from './secret-members.js';
import type { PreparedRecord } from './validate-record.js';
import { unmappedWarning } from './warnings.js';
import { writeBatchPlan } from './write-batch-plan.js';

/**
 * Where an import's batches are applied: each in a transaction of its own (a real run), or each in a
 * savepoint of one transaction that is rolled back at the end (a dry run, `dry-run.ts`).
 */
export interface ApplyTarget {
  /** Runs `work` atomically on the target's connection: all of it applies, or none. */
  atomic<T>(work: (client: PoolClient) => Promise<T>): Promise<T>;
  /** How many records of the task an earlier attempt finished (they are skipped). */
  done(client: PoolClient): Promise<number>;
  /** Keeps the details of records just applied, and the resume point after them. */
  keep(client: PoolClient, details: ImportDetail[], processed: number): Promise<void>;
  /** Called with the details once they are committed. */
  applied(details: readonly ImportDetail[]): void;
}

/** Times a batch is run again after Postgres broke a deadlock between it and another import's. */
const CONFLICT_RETRIES = 5;

/**
 * A real run: a transaction per batch that locks the task (for this attempt only), moves its
 * resume point, renews the attempt's lease and counts the outcomes.
 */
export function committedTarget(pool: Pool, attempt: TaskAttempt, leaseMs: number): ApplyTarget {
  return {
    atomic: (work) => withTransaction(pool, work, { conflictRetries: CONFLICT_RETRIES }),
    done: (client) => lockImportProgress(client, attempt),
    keep: (client, details, processed) => saveDetails(client, attempt, details, processed, leaseMs),
    applied: countOutcomes,
  };
}

/**
 * A part of a split file import (file-parts.ts): a transaction per batch that locks the part (for
 * this attempt only), keeps the details under the part's task and moves the part's resume point.
 */
export function partTarget(pool: Pool, part: ImportPart, leaseMs: number): ApplyTarget {
  return {
    atomic: (work) => withTransaction(pool, work, { conflictRetries: CONFLICT_RETRIES }),
    done: (client) => lockImportPart(client, part),
    keep: async (client, details, processed) => {
      await storeDetails(client, part.task_id, details);
      await advanceImportPart(client, part, processed, details.length, leaseMs);
    },
    applied: countOutcomes,
  };
}

/**
 * Applies one batch of validated records atomically: skip what an earlier attempt committed,
 * load, plan, write, keep the details and the new resume point. When the database refuses a value
 * of the batch (a data exception, an integrity violation, a value too large: whatever it says),
 * the batch is applied again record by record, so that only the record at fault fails and the
 * rest apply.
 */
export async function applyBatch(
  target: ApplyTarget,
  batch: readonly PreparedRecord[],
  options: ImportOptions,
): Promise<void> {
  try {
    target.applied(await target.atomic((client) => applyRecords(client, target, batch, options)));
  } catch (err) {
    if (classifyFault(err).kind !== 'data') throw err;
    const [only] = batch;
    if (batch.length > 1 || !only) {
      for (const record of batch) await applyBatch(target, [record], options);
      return;
    }
    const refused = await target.atomic(async (client) => {
      if ((await target.done(client)) > only.index) return [];
      const detail = refusedDetail(only, err);
      await target.keep(client, [detail], only.index + 1);
      return [detail];
    });
    target.applied(refused);
  }
}

/** Counts committed records by outcome (the `/metrics` counter). */
function countOutcomes(details: readonly ImportDetail[]): void {
  for (const d of details) importRecords.inc({ outcome: d.outcome });
}

/** The detail of a record the database refused: DuplicatedIdentity for a login id taken meanwhile. */
function refusedDetail(record: PreparedRecord, err: unknown): ImportDetail {
  const state = sqlState(err) ?? '';
  const error =
    state === UNIQUE_VIOLATION && (err as { table?: unknown }).table === 'identities'
      ? new ApiError('DuplicatedIdentity', 'identity already exists')
      : new ApiError('RecordRefused', refusalMessage(state), { sqlstate: state });
  return noted(
    {
      index: record.index,
      outcome: 'failed',
      record: redactRecord(record.raw),
      errors: [envelopeError(error)],
    },
    record,
  );
}

function refusalMessage(state: string): string {
  if (state.startsWith('23')) return 'the record conflicts with data already stored';
  if (state.startsWith('54')) return 'a value of the record is too large to store';
  return 'a value of the record cannot be stored';
}

async function applyRecords(
  client: PoolClient,
  target: ApplyTarget,
  batch: readonly PreparedRecord[],
  options: ImportOptions,
): Promise<ImportDetail[]> {
  const processed = await target.done(client);
  const todo = batch.filter((r) => r.index >= processed);
  if (todo.length === 0) return [];
  const state = await loadBatchState(client, todo, options);
  const plan = planBatch(todo, state, options);
  await writeBatchPlan(client, options.project.id, plan, state);
  if (options.recordChanges) await recordUserChanges(client, options.project.id, [...plan.changed.keys()]);
  const details = withFileNotes(plan.details, todo);
  await target.keep(client, details, (todo.at(-1)?.index ?? processed) + 1);
  return details;
}

/**
 * The details of a file's records with what the file says of each: its line (an ndjson or CSV
 * file's), and a warning naming the members of another system's user its conversion left out.
 */
function withFileNotes(details: ImportDetail[], records: readonly PreparedRecord[]): ImportDetail[] {
  if (records.every((r) => r.line === undefined && r.unmapped === undefined)) return details;
  const byIndex = new Map(records.map((r) => [r.index, r]));
  return details.map((d) => noted(d, byIndex.get(d.index)));
}

/** A detail with its record's line and left-out members (a warning), when it has them. */
function noted(detail: ImportDetail, record: PreparedRecord | undefined): ImportDetail {
  if (!record || (record.line === undefined && record.unmapped === undefined)) return detail;
  const { index, warnings, ...rest } = detail;
  const left = record.unmapped ? [unmappedWarning(record.unmapped)] : [];
  const all = [...(warnings ?? []), ...left];
  return {
    index,
    ...(record.line === undefined ? {} : { line: record.line }),
    ...rest,
    ...(all.length > 0 ? { warnings: all } : {}),
  };
}

/**
 * Stores the details of an import's records and moves its resume point past them, renewing the
 * lease of the attempt that holds the task's row.
 */
export async function saveDetails(
  client: PoolClient,
  attempt: TaskAttempt,
  details: ImportDetail[],
  processed: number,
  leaseMs: number,
): Promise<void> {
  await storeDetails(client, attempt.id, details);
  await saveImportProgress(client, attempt, processed, leaseMs);
}

/** Stores the details of a task's records. */
async function storeDetails(client: PoolClient, taskId: string, details: ImportDetail[]): Promise<void> {
  // The record as submitted may be any JSON value, so it is written as JSON text; warnings and
  // errors are arrays (JSON) or absent (NULL). Each may quote a string Postgres cannot store (a
  // record that failed validation for holding one): such characters are shown as U+FFFD.
  await copyRows(
    client,
    'import_details',
    ['task_id', 'index', 'line', 'outcome', 'user_id', 'record', 'warnings', 'errors'],
    details.map((d) => [
      taskId,
      d.index,
      d.line,
      d.outcome,
      d.user_id,
      storableJson(d.record),
      d.warnings && storableJson(d.warnings),
      d.errors && storableJson(d.errors),
    ]),
  );
}
