import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ExportFormat } from '../../schemas/index.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { ServiceConfig } from '../config.js';
import { isRetriable, type Pool } from '../db/pool.js';
import { failTask } from '../db/tasks.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';
import { encodeCsv } from './encode-csv.js';
import { encodeNdjson } from './encode-ndjson.js';
import { exportFileHeaders, exportFileName } from './export-file.js';
import type { ExportField } from './pointers.js';
import { projectPointers } from './project-pointers.js';
import {
  copyLinesToRecords,
  prepareSnapshot,
  RECORD_ARRAYS_IN_FLIGHT,
  streamUserRecords,
  type UserExportRecord,
} from './user-records.js';

/** What POST stored beside the task: the format and, for CSV, the resolved columns. */
export interface ExportTaskOptions {
  readonly format: ExportFormat;
  readonly fields: readonly ExportField[];
}

/** How often the count of users written is saved, for the status read's `progress`. */
const PROGRESS_EVERY_MS = 250;

/**
 * Runs an export task: users -> records -> (CSV: pointer projection) -> encoder -> one block
 * blob, then the task is completed with the file's name. Re-running is safe: a completed task is
 * left alone, and an attempt cut short never committed its blob. Only an unavailable database
 * makes it throw (for another delivery); any other failure completes the task with `failed_at`
 * and `error`.
 */
export async function runExport(
  pool: Pool,
  blobs: BlobStorage | undefined,
  config: ServiceConfig,
  taskId: string,
  log: Logger,
): Promise<void> {
  const { rows } = await pool.query<{ options: ExportTaskOptions }>(
    `SELECT options FROM tasks WHERE id = $1 AND kind = 'export' AND status = 'pending'`,
    [taskId],
  );
  const task = rows[0];
  if (!task) return;
  const started = Date.now();
  let fileName: string;
  try {
    if (!blobs) throw new ApiError('InternalError', 'UserExportDisabled', 'user export is disabled');
    fileName = exportFileName(config.project.id, taskId, task.options.format, new Date());
    await writeExportFile(pool, blobs, config, taskId, task.options, fileName);
  } catch (err) {
    if (isRetriable(err)) throw err;
    log.error({ err, task_id: taskId }, 'export failed');
    const error =
      err instanceof ApiError
        ? err
        : new ApiError('InternalError', 'UnexpectedError', 'the export could not finish');
    await failTask(pool, taskId, error);
    return;
  }
  await pool.query(
    `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), file_name = $2,
            progress_processed = progress_total
      WHERE id = $1 AND status = 'pending'`,
    [taskId, fileName],
  );
  log.info({ task_id: taskId, ms: Date.now() - started }, 'export completed');
}

async function writeExportFile(
  pool: Pool,
  blobs: BlobStorage,
  config: ServiceConfig,
  taskId: string,
  options: ExportTaskOptions,
  fileName: string,
): Promise<void> {
  const client = await pool.connect();
  const progress = progressSaver(pool, taskId);
  let failed: unknown;
  try {
    const total = await prepareSnapshot(client, config.project.publicOrigin);
    await pool.query('UPDATE tasks SET progress_total = $2, progress_processed = 0 WHERE id = $1', [
      taskId,
      total,
    ]);
    const encoded =
      options.format === 'csv'
        ? [projectPointers(options.fields), encodeCsv(options.fields.map((f) => f.field_name))]
        : [encodeNdjson()];
    const file = new PassThrough();
    await Promise.all([
      pipeline([streamUserRecords(client), copyLinesToRecords(), progress.counter, ...encoded, file]),
      blobs.upload(fileName, file, exportFileHeaders(fileName, options.format)).catch((err: unknown) => {
        file.destroy(err instanceof Error ? err : new Error(String(err))); // stops the producer too
        throw err;
      }),
    ]);
    await client.query('COMMIT');
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    progress.stop();
    // A client whose COPY was cut short is in an unknown state: it is discarded, not reused.
    client.release(failed instanceof Error ? failed : undefined);
  }
}

/** Counts the records passing through and saves the count every PROGRESS_EVERY_MS. */
function progressSaver(pool: Pool, taskId: string): { counter: Transform; stop(): void } {
  let processed = 0;
  let saved = 0;
  const timer = setInterval(() => {
    if (processed === saved) return;
    saved = processed;
    pool
      .query('UPDATE tasks SET progress_processed = $2 WHERE id = $1 AND status = $3', [
        taskId,
        saved,
        'pending',
      ])
      .catch(() => {}); // progress is advisory; the export itself reports real failures
  }, PROGRESS_EVERY_MS);
  const counter = new Transform({
    objectMode: true,
    highWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: UserExportRecord[], _enc, done: TransformCallback) {
      processed += records.length;
      done(null, records);
    },
  });
  return { counter, stop: () => clearInterval(timer) };
}
