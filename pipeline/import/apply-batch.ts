import { copyRows } from '../db/copy-rows.js';
import { type Pool, type PoolClient, sqlState, UNIQUE_VIOLATION } from '../db/pool.js';
import { ApiError, envelopeError } from '../errors.js';
import { loadBatchState } from './load-batch-state.js';
import type { IndexedRecord } from './parse-records.js';
import { type ImportDetail, type ImportOptions, planBatch, prepareBatch } from './plan-batch.js';
import { redactRecord } from './redact.js';
import { writeBatchPlan } from './write-batch-plan.js';

/**
 * Applies one batch in one transaction: lock the task, skip what an earlier attempt committed,
 * load, plan, write, record the details and the new resume point. If the multi-row write fails
 * (another writer took a login id in between), the batch is applied again record by record, so
 * that only the record that conflicts fails.
 */
export async function applyBatch(
  pool: Pool,
  taskId: string,
  batch: readonly IndexedRecord[],
  options: ImportOptions,
): Promise<void> {
  try {
    await inTransaction(pool, (client) => applyInTransaction(client, taskId, batch, options));
  } catch (err) {
    if (batch.length === 1 || sqlState(err) === undefined) throw err;
    for (const record of batch) await applySingle(pool, taskId, record, options);
  }
}

async function applySingle(
  pool: Pool,
  taskId: string,
  record: IndexedRecord,
  options: ImportOptions,
): Promise<void> {
  try {
    await inTransaction(pool, (client) => applyInTransaction(client, taskId, [record], options));
  } catch (err) {
    if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
    const error = new ApiError('Invalid', 'DuplicatedIdentity', 'identity already exists');
    const detail: ImportDetail = {
      index: record.index,
      outcome: 'failed',
      record: redactRecord(record.raw),
      errors: [envelopeError(error)],
    };
    await inTransaction(pool, async (client) => {
      if ((await lockTask(client, taskId)) > record.index) return;
      await saveDetails(client, taskId, [detail], record.index + 1);
    });
  }
}

async function applyInTransaction(
  client: PoolClient,
  taskId: string,
  batch: readonly IndexedRecord[],
  options: ImportOptions,
): Promise<void> {
  const processed = await lockTask(client, taskId);
  const todo = batch.filter((r) => r.index >= processed);
  if (todo.length === 0) return;
  const prepared = prepareBatch(todo, options);
  const state = await loadBatchState(client, prepared, options);
  const plan = planBatch(prepared, state, options);
  await writeBatchPlan(client, plan, state);
  await saveDetails(client, taskId, plan.details, (todo.at(-1)?.index ?? processed) + 1);
}

/** Locks the task row for this transaction and returns how many records are already applied. */
async function lockTask(client: PoolClient, taskId: string): Promise<number> {
  const { rows } = await client.query<{ progress_processed: number }>(
    `SELECT progress_processed FROM tasks WHERE id = $1 AND status = 'pending' FOR UPDATE`,
    [taskId],
  );
  // A task that is gone or already completed has nothing left to apply.
  return rows[0]?.progress_processed ?? Number.POSITIVE_INFINITY;
}

async function saveDetails(
  client: PoolClient,
  taskId: string,
  details: ImportDetail[],
  processed: number,
): Promise<void> {
  // The record as submitted may be any JSON value, so it is written as JSON text; warnings and
  // errors are arrays (JSON) or absent (NULL).
  await copyRows(
    client,
    'import_details',
    ['task_id', 'index', 'outcome', 'user_id', 'record', 'warnings', 'errors'],
    details.map((d) => [
      taskId,
      d.index,
      d.outcome,
      d.user_id,
      JSON.stringify(d.record),
      d.warnings,
      d.errors,
    ]),
  );
  await client.query('UPDATE tasks SET progress_processed = $2 WHERE id = $1', [taskId, processed]);
}

async function inTransaction(pool: Pool, work: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
