import type { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { ExportTaskOptions } from '../../schemas/index.js';
import { type DigestedFile, digestInto } from '../blob/file-digest.js';
import type { PoolClient } from '../db/pool.js';
import { CopyRecords } from './assemble-records.js';
import { csvText } from './encode-csv.js';
import { ndjsonText } from './encode-ndjson.js';
import { encodeRecords } from './encode-records.js';
import { pointedMembers } from './pointers.js';
import { type SnapshotSettings, streamUserRows, TIME_POINTERS } from './user-rows.js';

/** Which users the export's records statement reads, and what their records carry. */
export function snapshotSettings(options: ExportTaskOptions): SnapshotSettings {
  return {
    filters: options.filters,
    times: options.fields.some((f) => TIME_POINTERS.includes(f.pointer)),
    passwordHashes: options.include_password_hashes === true,
    // A CSV file holds only the cells its fields point at; an ndjson file holds whole records.
    members: options.format === 'csv' ? pointedMembers(options.fields) : undefined,
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
 * text -> file, the middle steps in one stage (encodeRecords).
 */
export async function writeRecords<T>(
  client: PoolClient,
  settings: SnapshotSettings,
  options: ExportTaskOptions,
  writing: RecordsWriting<T>,
): Promise<DigestedFile<T>> {
  const text =
    options.format === 'csv'
      ? csvText(options.fields, {
          escapeFormulas: options.escape_formulas === true,
          withHeader: writing.header,
        })
      : ndjsonText();
  return digestInto(
    [
      streamUserRows(client, settings),
      encodeRecords(
        new CopyRecords({
          totpIssuer: writing.totpIssuer,
          members: settings.members,
        }),
        text,
        writing.progress,
      ),
      ...(options.compression === 'gzip' ? [createGzip()] : []),
    ],
    writing.sink,
    writing.signal,
  );
}
