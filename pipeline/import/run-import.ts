import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ImportIdentifier } from '../../schemas/index.js';
import type { ServiceConfig } from '../config.js';
import { isRetriable, type Pool } from '../db/pool.js';
import { failTask } from '../db/tasks.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';
import { applyBatch } from './apply-batch.js';
import { batchRecords } from './batch-records.js';
import { type IndexedRecord, recordStages } from './parse-records.js';
import type { ImportOptions } from './plan-batch.js';
import { recordValidator } from './validate-record.js';

/** The request members other than the records, stored beside the input when the task is created. */
export interface ImportTaskOptions {
  readonly identifier: ImportIdentifier;
  readonly upsert: boolean;
}

interface PendingImport {
  readonly input: string;
  readonly options: ImportTaskOptions;
  readonly progress_processed: number;
}

/**
 * Runs (or resumes) an import task: stored request -> records -> batches -> one transaction each
 * -> summary. Idempotent: records already applied by an earlier attempt are skipped, and a
 * completed task is left alone, so a redelivered task message does no harm. Only an unavailable
 * database makes it throw (for another delivery); any other failure completes the task with
 * `failed_at` and `error`.
 */
export async function runImport(
  pool: Pool,
  config: ServiceConfig,
  taskId: string,
  log: Logger,
): Promise<void> {
  const { rows } = await pool.query<PendingImport>(
    `SELECT input, options, progress_processed FROM tasks WHERE id = $1 AND kind = 'import' AND status = 'pending'`,
    [taskId],
  );
  const task = rows[0];
  if (!task) return;
  const started = Date.now();
  try {
    await applyRecords(pool, config, taskId, task);
  } catch (err) {
    if (isRetriable(err)) throw err;
    log.error({ err, task_id: taskId }, 'import failed');
    await failTask(
      pool,
      taskId,
      new ApiError('InternalError', 'UnexpectedError', 'the import could not finish'),
    );
    return;
  }
  await completeImport(pool, taskId);
  log.info({ task_id: taskId, ms: Date.now() - started }, 'import completed');
}

async function applyRecords(
  pool: Pool,
  config: ServiceConfig,
  taskId: string,
  task: PendingImport,
): Promise<void> {
  const options: ImportOptions = {
    identifier: task.options.identifier,
    upsert: task.options.upsert,
    project: config.project,
    validate: recordValidator(task.options.identifier, config.project),
  };
  await pipeline([
    ...recordStages(task.input),
    batchRecords(config.importBatchSize, task.progress_processed),
    new Writable({
      objectMode: true,
      highWaterMark: 1,
      write(batch: IndexedRecord[], _enc, done) {
        applyBatch(pool, taskId, batch, options).then(() => done(), done);
      },
    }),
  ]);
}

/** Completes the task with a summary counted from its details, so each record counts once. */
async function completeImport(pool: Pool, taskId: string): Promise<void> {
  await pool.query(
    `UPDATE tasks t SET status = 'completed', completed_at = clock_timestamp(),
            summary = (SELECT jsonb_build_object(
                'total', count(*),
                'inserted', count(*) FILTER (WHERE outcome = 'inserted'),
                'updated', count(*) FILTER (WHERE outcome = 'updated'),
                'skipped', count(*) FILTER (WHERE outcome = 'skipped'),
                'failed', count(*) FILTER (WHERE outcome = 'failed'))
              FROM import_details d WHERE d.task_id = t.id)
      WHERE t.id = $1 AND t.status = 'pending'`,
    [taskId],
  );
}
