import { copyRows } from '../db/copy-rows.js';
import type { Pool, PoolClient } from '../db/pool.js';
import { lockImportProgress, saveImportProgress } from '../db/tasks.js';
import { withTransaction } from '../db/transaction.js';
import { recordUserChanges } from '../db/user-changes.js';
import { ApiError, classifyFault, envelopeError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { importRecords } from '../operator/metrics.js';
import { storableJson } from '../storable-text.js';
import { loadBatchState } from './load-batch-state.js';
import { type ImportDetail, type ImportOptions, type PreparedRecord, planBatch } from './plan-batch.js';
import { redactRecord } from './secret-members.js';
import { writeBatchPlan } from './write-batch-plan.js';

/**
 * Applies one batch of validated records in one transaction: lock the task, skip what an earlier
 * attempt committed, load, plan, write, record the details and the new resume point. When the
 * database refuses a value of the batch (a data exception, an integrity violation, a value too
 * large: whatever it says), the batch is applied again record by record, so that only the record
 * at fault fails and the rest apply.
 */
export async function applyBatch(
  pool: Pool,
  taskId: string,
  batch: readonly PreparedRecord[],
  options: ImportOptions,
): Promise<void> {
  try {
    countOutcomes(
      await withTransaction(pool, (client) => applyInTransaction(client, taskId, batch, options)),
    );
  } catch (err) {
    if (classifyFault(err).kind !== 'data') throw err;
    const [only] = batch;
    if (batch.length > 1 || !only) {
      for (const record of batch) await applyBatch(pool, taskId, [record], options);
      return;
    }
    const refused = await withTransaction(pool, async (client) => {
      if ((await lockImportProgress(client, taskId)) > only.index) return [];
      const detail = refusedDetail(only, err);
      await saveDetails(client, taskId, [detail], only.index + 1);
      return [detail];
    });
    countOutcomes(refused);
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
      ? new ApiError('Invalid', 'DuplicatedIdentity', 'identity already exists')
      : new ApiError('Invalid', 'RecordRefused', refusalMessage(state), { sqlstate: state });
  return {
    index: record.index,
    outcome: 'failed',
    record: redactRecord(record.raw),
    errors: [envelopeError(error)],
  };
}

function refusalMessage(state: string): string {
  if (state.startsWith('23')) return 'the record conflicts with data already stored';
  if (state.startsWith('54')) return 'a value of the record is too large to store';
  return 'a value of the record cannot be stored';
}

async function applyInTransaction(
  client: PoolClient,
  taskId: string,
  batch: readonly PreparedRecord[],
  options: ImportOptions,
): Promise<ImportDetail[]> {
  const processed = await lockImportProgress(client, taskId);
  const todo = batch.filter((r) => r.index >= processed);
  if (todo.length === 0) return [];
  const state = await loadBatchState(client, todo, options);
  const plan = planBatch(todo, state, options);
  await writeBatchPlan(client, plan, state);
  if (options.recordChanges) await recordUserChanges(client, [...plan.changed.keys()]);
  await saveDetails(client, taskId, plan.details, (todo.at(-1)?.index ?? processed) + 1);
  return plan.details;
}

async function saveDetails(
  client: PoolClient,
  taskId: string,
  details: ImportDetail[],
  processed: number,
): Promise<void> {
  // The record as submitted may be any JSON value, so it is written as JSON text; warnings and
  // errors are arrays (JSON) or absent (NULL). Each may quote a string Postgres cannot store (a
  // record that failed validation for holding one): such characters are shown as U+FFFD.
  await copyRows(
    client,
    'import_details',
    ['task_id', 'index', 'outcome', 'user_id', 'record', 'warnings', 'errors'],
    details.map((d) => [
      taskId,
      d.index,
      d.outcome,
      d.user_id,
      storableJson(d.record),
      d.warnings && storableJson(d.warnings),
      d.errors && storableJson(d.errors),
    ]),
  );
  await saveImportProgress(client, taskId, processed);
}
