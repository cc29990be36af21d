import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { ExportFormat } from '../../schemas/index.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import { requireExportStorage } from '../blob/open-blob-storage.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { completeExport, setProgressTotal } from '../db/tasks.js';
import { usersExported } from '../operator/metrics.js';
import type { TaskRun } from '../tasks/run-task.js';
import type { UserRecord } from './assemble-records.js';
import { encodeCsv } from './encode-csv.js';
import { encodeNdjson } from './encode-ndjson.js';
import { attemptBlobName, type ExportCompression, exportFileHeaders, exportFileName } from './export-file.js';
import {
  assembleRecords,
  type ExportFilters,
  prepareSnapshot,
  RECORD_ARRAYS_IN_FLIGHT,
  type SnapshotSettings,
  streamUserRows,
  TIME_POINTERS,
} from './export-records.js';
import type { ExportField } from './pointers.js';
import { projectPointers } from './project-pointers.js';

/**
 * What POST stored beside the task: the format, for CSV the resolved columns and whether formulas
 * are escaped, the compression and the filters.
 */
export interface ExportTaskOptions {
  readonly format: ExportFormat;
  readonly fields: readonly ExportField[];
  readonly escapeFormulas?: boolean;
  readonly compression?: ExportCompression;
  readonly filters?: ExportFilters;
  /** ndjson records carry `password` and `mfa.password` (the project allows it). */
  readonly includePasswordHashes?: boolean;
}

/**
 * Runs an export task: users -> records -> (CSV: pointer projection) -> encoder -> one block blob,
 * then the task is completed with the file's name. Running it again is safe: an attempt cut short
 * (a fault, a cancel) never committed its blob, and its staged blocks are discarded.
 */
export async function runExport(
  pool: Pool,
  blobs: BlobStorage | undefined,
  config: ServiceConfig,
  run: TaskRun,
): Promise<void> {
  const storage = requireExportStorage(blobs);
  const options = run.task.options as unknown as ExportTaskOptions;
  const fileName = exportFileName(
    run.task.project_id,
    run.task.id,
    options.format,
    new Date(),
    options.compression,
  );
  const blobName = attemptBlobName(fileName);
  let exported: number;
  try {
    exported = await writeExportFile(pool, storage, config, run, options, { fileName, blobName });
  } catch (err) {
    await storage.discard(blobName).catch(() => {}); // the blocks expire unclaimed anyway
    throw err;
  }
  // Cancelled or expired just as it finished, or completed by another attempt (after a restart
  // the bus may deliver a task twice): a file the task does not name is not kept.
  if ((await completeExport(pool, run.task.id, blobName)) !== blobName) await storage.delete(blobName);
  else usersExported.inc(exported);
}

async function writeExportFile(
  pool: Pool,
  blobs: BlobStorage,
  config: ServiceConfig,
  run: TaskRun,
  options: ExportTaskOptions,
  names: { fileName: string; blobName: string },
): Promise<number> {
  const client = await pool.connect();
  let failed: unknown;
  try {
    const passwordHashes = options.includePasswordHashes === true;
    if (passwordHashes)
      run.log.warn({ include_password_hashes: true }, 'the export file holds password hashes');
    const settings: SnapshotSettings = {
      filters: options.filters,
      times: options.fields.some((f) => TIME_POINTERS.includes(f.pointer)),
      passwordHashes,
    };
    const total = await prepareSnapshot(client, settings);
    await setProgressTotal(pool, run.task.id, total);
    const encoded: NodeJS.ReadWriteStream[] =
      options.format === 'csv'
        ? [
            projectPointers(options.fields),
            encodeCsv(
              options.fields.map((f) => f.field_name),
              { escapeFormulas: options.escapeFormulas === true },
            ),
          ]
        : [encodeNdjson()];
    if (options.compression === 'gzip') encoded.push(createGzip());
    const file = new PassThrough();
    // Both settle before this attempt ends: a block still being staged when the other side failed
    // would otherwise land after the blocks were discarded, and stay.
    const [produced, uploaded] = await Promise.allSettled([
      pipeline(
        [
          streamUserRows(client, settings),
          assembleRecords({ totpIssuer: config.project.publicOrigin }),
          progressCounter(run),
          ...encoded,
          file,
        ],
        {
          signal: run.signal,
        },
      ),
      blobs
        .upload(
          names.blobName,
          file,
          exportFileHeaders(names.fileName, options.format, options.compression),
          run.signal,
        )
        .catch((err: unknown) => {
          file.destroy(err instanceof Error ? err : new Error(String(err))); // stops the producer too
          throw err;
        }),
    ]);
    if (produced.status === 'rejected') throw produced.reason;
    if (uploaded.status === 'rejected') throw uploaded.reason;
    await client.query('COMMIT');
    return total;
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    // A client whose COPY was cut short is in an unknown state: it is discarded, not reused.
    client.release(failed instanceof Error ? failed : undefined);
  }
}

/** Counts the records passing through and reports the count to the runner (saved with its heartbeat). */
function progressCounter(run: TaskRun): Transform {
  let processed = 0;
  return new Transform({
    objectMode: true,
    highWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: UserRecord[], _enc, done: TransformCallback) {
      processed += records.length;
      run.progress(processed);
      done(null, records);
    },
  });
}
