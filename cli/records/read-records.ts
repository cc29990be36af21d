import { createReadStream, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type Duplex, pipeline } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import chain from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { CliError } from '../cli-error.js';
import {
  CSV_OPTIONS,
  csvFileRecord,
  type FileRecord,
  jsonFileRecord,
  type RecordFormat,
} from './file-records.js';
import { fromAuth0 } from './from/auth0.js';
import { Auth0Hashes } from './from/auth0-hashes.js';
import { fromClerk } from './from/clerk.js';
import { fromCognito } from './from/cognito.js';
import { fromFirebase } from './from/firebase.js';
import type { FirebaseHashFlags, ForeignRecord, ForeignSystem } from './from/foreign-record.js';
import { fromKeycloak } from './from/keycloak.js';

/**
 * Another system's user file (`--from`), Firebase's hash parameters when given as flags, and the
 * password hash file Auth0 support delivers beside an Auth0 export (`--hashes`).
 */
export interface ForeignFile {
  readonly system: ForeignSystem;
  readonly firebase?: FirebaseHashFlags;
  readonly auth0Hashes?: string;
}

/** A file being read: its records, how many of its bytes were read so far, and what to report at the end. */
export interface RecordFile {
  readonly records: AsyncGenerator<FileRecord>;
  bytesRead(): number;
  /** Lines for the closing report once every record was read (an Auth0 hash join's leftovers). */
  report(): readonly string[];
}

/**
 * The records of a file, one at a time (nothing holds the whole file): ndjson lines (blank lines
 * skipped), the elements of a JSON array, or CSV rows under a header of record members. A record
 * that is not a JSON object, or a line that is not JSON, comes with a problem and fails alone.
 */
export async function openRecords(
  file: string,
  format: RecordFormat,
  from?: ForeignFile,
): Promise<RecordFile> {
  const input = createReadStream(file);
  await new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot read ${file}: ${err.code}`)),
    );
  });
  const hashes = from?.auth0Hashes ? await Auth0Hashes.read(from.auth0Hashes) : undefined;
  const records = from
    ? readForeignRecords(input, file, format, from, hashes)
    : readRecords(input, file, format);
  return { records, bytesRead: () => input.bytesRead, report: () => hashes?.report() ?? [] };
}

/**
 * Another system's users mapped to records: Auth0's ndjson export or bulk-import JSON array,
 * Firebase's `auth:export` JSON and Keycloak's realm or users files (their `users` arrays), and
 * Cognito's and Clerk's user CSVs.
 */
async function* readForeignRecords(
  input: ReadStream,
  file: string,
  format: RecordFormat,
  from: ForeignFile,
  hashes: Auth0Hashes | undefined,
): AsyncGenerator<FileRecord> {
  const mapped = <S extends Readonly<Record<string, unknown>>>(
    position: number,
    user: S,
    map: (user: S) => ForeignRecord,
  ): FileRecord => {
    const { record, unmapped } = map(user);
    const source = Object.keys(user).filter(
      (k) => user[k] !== undefined && user[k] !== null && user[k] !== '',
    );
    return { position, record, source, ...(unmapped.length > 0 ? { unmapped } : {}) };
  };
  if (from.system === 'cognito' || from.system === 'clerk') {
    const map = from.system === 'cognito' ? fromCognito : fromClerk;
    let position = 0;
    for await (const row of csvRows(input, file)) yield mapped(position++, row, map);
    return;
  }
  if (from.system === 'auth0') {
    for await (const item of readRecords(input, file, format)) {
      yield 'record' in item ? mapped(item.position, item.record, (user) => fromAuth0(user, hashes)) : item;
    }
    return;
  }
  const users = parsed<{ value: unknown }>(
    input,
    chain([parser({ streamValues: false }), pick({ filter: 'users' }), streamArray()], {
      writableObjectMode: false,
      readableObjectMode: true,
    }),
  );
  // Firebase's auth:export and Keycloak's realm (or users) files both hold their users in `users`.
  const map =
    from.system === 'keycloak'
      ? fromKeycloak
      : (user: Readonly<Record<string, unknown>>) => fromFirebase(user, from.firebase);
  let position = 0;
  try {
    for await (const { value } of users) {
      const read = jsonFileRecord(position++, () => value);
      yield 'record' in read ? mapped(read.position, read.record, map) : read;
    }
  } catch (err) {
    const kind = from.system === 'keycloak' ? 'Keycloak realm or users' : 'Firebase auth:export';
    throw new CliError(`${file} is not a ${kind} JSON file: ${(err as Error).message}`);
  }
}

/**
 * What `stage` makes of the file, read as it is parsed: a failure of either side (a file that
 * cannot be read, text that does not parse) ends the reading with its error.
 */
function parsed<T>(input: ReadStream, stage: Duplex): AsyncIterable<T> {
  return pipeline(input, stage, () => {});
}

async function* csvRows(input: ReadStream, file: string): AsyncGenerator<Record<string, string>> {
  const rows = parsed<Record<string, string>>(input, parseCsv({ ...CSV_OPTIONS }));
  try {
    for await (const row of rows) yield row;
  } catch (err) {
    throw new CliError(`${file} is not a CSV file with a header row: ${(err as Error).message}`);
  }
}

async function* readRecords(
  input: ReadStream,
  file: string,
  format: RecordFormat,
): AsyncGenerator<FileRecord> {
  let position = 0;
  if (format === 'ndjson') {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line.trim() === '') continue;
      yield jsonFileRecord(position++, () => JSON.parse(line));
    }
  } else if (format === 'json') {
    const elements = parsed<{ value: unknown }>(
      input,
      chain([parser({ streamValues: false }), streamArray()], {
        writableObjectMode: false,
        readableObjectMode: true,
      }),
    );
    try {
      for await (const { value } of elements) yield jsonFileRecord(position++, () => value);
    } catch (err) {
      throw new CliError(`${file} is not a JSON array of records: ${(err as Error).message}`);
    }
  } else {
    for await (const row of csvRows(input, file)) yield csvFileRecord(position++, row);
  }
}
