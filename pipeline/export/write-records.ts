import type { Readable, Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { ExportTaskOptions } from '../../schemas/index.js';
import { type DigestedFile, digestInto } from '../blob/file-digest.js';
import type { PoolClient } from '../db/pool.js';
import { streamStage } from '../stream-stage.js';
import { assembleRecords, type UserRecord } from './assemble-records.js';
import { encodeCsv } from './encode-csv.js';
import { encodeNdjson } from './encode-ndjson.js';
import { projectPointers } from './project-pointers.js';
import { RECORD_ARRAYS_IN_FLIGHT } from './stage-marks.js';
import { type SnapshotSettings, streamUserRows, TIME_POINTERS } from './user-rows.js';

/** Which users the export's records statement reads, and what their records carry. */
export function snapshotSettings(options: ExportTaskOptions): SnapshotSettings {
  return {
    filters: options.filters,
    times: options.fields.some((f) => TIME_POINTERS.includes(f.pointer)),
    passwordHashes: options.include_password_hashes === true,
  };
}

/** How one stream of records is written: where it goes, and what it reports on the way. */
export interface RecordsWriting<T> {
  readonly totpIssuer: string;
  /** CSV: the header row first (a split export's parts after the first leave it out). */
  readonly header: boolean;
  /** Told the number of records written so far, after each batch. */
  readonly progress: (processed: number) => void;
  readonly signal: AbortSignal;
  /** Takes the encoded file (a part of it, for a split export) as it is produced. */
  readonly sink: (file: Readable) => Promise<T>;
}

/**
 * Streams the records of the snapshot prepared on `client` (prepareSnapshot) through the
 * format's encoder (and gzip) into the sink: rows -> records -> (CSV: pointer projection) ->
 * encoder -> file.
 */
export async function writeRecords<T>(
  client: PoolClient,
  settings: SnapshotSettings,
  options: ExportTaskOptions,
  writing: RecordsWriting<T>,
): Promise<DigestedFile<T>> {
  const encoded: NodeJS.ReadWriteStream[] =
    options.format === 'csv'
      ? [
          projectPointers(options.fields),
          encodeCsv(
            options.fields.map((f) => f.field_name),
            { escapeFormulas: options.escape_formulas === true, withHeader: writing.header },
          ),
        ]
      : [encodeNdjson()];
  if (options.compression === 'gzip') encoded.push(createGzip());
  return digestInto(
    [
      streamUserRows(client, settings),
      assembleRecords({ totpIssuer: writing.totpIssuer }),
      progressCounter(writing.progress),
      ...encoded,
    ],
    writing.sink,
    writing.signal,
  );
}

/** Counts the records passing through and reports the count. */
function progressCounter(report: (processed: number) => void): Transform {
  let processed = 0;
  return streamStage(
    { objectMode: true, highWaterMark: RECORD_ARRAYS_IN_FLIGHT },
    (records: UserRecord[]) => {
      processed += records.length;
      report(processed);
      return records;
    },
  );
}
