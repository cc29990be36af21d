import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ImportIdentifier } from '../../schemas/index.js';
import type { ProjectConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import { applyBatch } from './apply-batch.js';
import { batchRecords } from './batch-records.js';
import type { IndexedRecord } from './parse-records.js';
import { recordStages } from './parse-records.js';
import type { ImportOptions } from './plan-batch.js';
import { recordValidator } from './validate-record.js';

/** Records applied per transaction. */
export const IMPORT_BATCH_SIZE = 500;

/**
 * Runs (or resumes) an import task: stored request -> records -> batches -> one transaction each
 * -> summary. Idempotent: records already applied by an earlier attempt are skipped, and a
 * completed task is left alone, so a redelivered task message does no harm.
 */
export async function runImport(
  pool: Pool,
  project: ProjectConfig,
  taskId: string,
  log: Logger,
): Promise<void> {
  const { rows } = await pool.query<{
    input: string;
    options: ImportTaskOptions;
    progress_processed: number;
  }>(
    `SELECT input, options, progress_processed FROM tasks WHERE id = $1 AND kind = 'import' AND status = 'pending'`,
    [taskId],
  );
  const task = rows[0];
  if (!task) return;
  const header = task.options;
  const options: ImportOptions = {
    identifier: header.identifier,
    upsert: header.upsert,
    project,
    validate: recordValidator(header.identifier, project),
  };
  const started = Date.now();
  await pipeline([
    ...recordStages(task.input),
    batchRecords(IMPORT_BATCH_SIZE, task.progress_processed),
    new Writable({
      objectMode: true,
      highWaterMark: 1,
      write(batch: IndexedRecord[], _enc, done) {
        applyBatch(pool, taskId, batch, options).then(() => done(), done);
      },
    }),
  ]);
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
  log.info({ task_id: taskId, ms: Date.now() - started }, 'import completed');
}

/** The request members other than the records, stored beside the input when the task is created. */
export interface ImportTaskOptions {
  readonly identifier: ImportIdentifier;
  readonly upsert: boolean;
}
