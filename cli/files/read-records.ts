import { createReadStream, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type Duplex, pipeline } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import chain from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import {
  CSV_OPTIONS,
  csvFileRecord,
  type FileRecord,
  jsonFileRecord,
  type RecordFormat,
} from '../../records/file-records.js';
import {
  csvColumnsOf,
  type SourceUser,
  sourceUser,
  userConversion,
  usersMember,
} from '../../records/from/convert-users.js';
import type { FirebaseHashFlags, ForeignSystem } from '../../records/from/foreign-record.js';
import type { SourceMapping } from '../../records/from/source-mapping.js';
import { CliError } from '../cli-error.js';
import { Auth0Hashes } from './auth0-hashes.js';

/**
 * Another system's user file (`--from`), Firebase's hash parameters when given as flags, the
 * password hash file Auth0 support delivers beside an Auth0 export (`--hashes`), and the run's
 * mapping of what each tenant keeps in its own place.
 */
export interface ForeignFile {
  readonly system: ForeignSystem;
  readonly firebase?: FirebaseHashFlags;
  readonly auth0Hashes?: string;
  readonly mapping?: SourceMapping;
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
  const input = await openFile(file);
  const hashes = from?.auth0Hashes ? await Auth0Hashes.read(from.auth0Hashes) : undefined;
  const records = from
    ? readForeignRecords(input, file, format, from, hashes)
    : readRecords(input, file, format);
  return { records, bytesRead: () => input.bytesRead, report: () => hashes?.report() ?? [] };
}

async function openFile(file: string): Promise<ReadStream> {
  const input = createReadStream(file);
  await new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot read ${file}: ${err.code}`)),
    );
  });
  return input;
}

/**
 * Another system's users converted to records (records/from): Auth0's ndjson or CSV export or
 * bulk-import JSON array, Firebase's `auth:export` JSON or CSV, Cognito's `list-users` JSON or user
 * CSV (its social users merged into the user of their email, which takes a first reading of the
 * file), Keycloak's realm or users files and Clerk's users CSV.
 */
async function* readForeignRecords(
  input: ReadStream,
  file: string,
  format: RecordFormat,
  from: ForeignFile,
  hashes: Auth0Hashes | undefined,
): AsyncGenerator<FileRecord> {
  const conversion = userConversion(from.system, {
    ...(from.mapping ? { mapping: from.mapping } : {}),
    ...(from.firebase ? { firebase: from.firebase } : {}),
    ...(hashes ? { auth0Hashes: hashes } : {}),
  });
  if (conversion.readsTwice)
    for await (const item of sourceUsers(await openFile(file), file, format, from.system))
      conversion.note(item);
  for await (const item of sourceUsers(input, file, format, from.system)) yield conversion.convert(item);
}

/** The users of another system's file as its own format holds them, read as the file streams. */
async function* sourceUsers(
  input: ReadStream,
  file: string,
  format: RecordFormat,
  system: ForeignSystem,
): AsyncGenerator<SourceUser> {
  const member = usersMember(system);
  if (format === 'csv' || member === undefined) {
    // CSV rows, ndjson lines or the elements of a JSON array (Auth0's), as records are read.
    const rows =
      format === 'csv' ? csvRecords(input, file, csvColumnsOf(system)) : readRecords(input, file, format);
    for await (const item of rows)
      yield 'record' in item
        ? { position: item.position, user: sourceUser(system, format, item.record) }
        : (item as SourceUser);
    return;
  }
  const users = parsed<{ value: unknown }>(
    input,
    chain([parser({ streamValues: false }), pick({ filter: member }), streamArray()], {
      writableObjectMode: false,
      readableObjectMode: true,
    }),
  );
  let position = 0;
  try {
    for await (const { value } of users) {
      const read = jsonFileRecord(position++, () => value);
      yield 'record' in read
        ? { position: read.position, user: sourceUser(system, format, read.record) }
        : (read as SourceUser);
    }
  } catch (err) {
    throw new CliError(
      `${file} is not a ${system} JSON file with a "${member}" array: ${(err as Error).message}`,
    );
  }
}

/** The rows of a CSV file as records of their cells, under its header or the columns given. */
async function* csvRecords(
  input: ReadStream,
  file: string,
  columns?: readonly string[],
): AsyncGenerator<FileRecord> {
  let position = 0;
  for await (const row of csvRows(input, file, columns)) yield { position: position++, record: row };
}

/**
 * What `stage` makes of the file, read as it is parsed: a failure of either side (a file that
 * cannot be read, text that does not parse) ends the reading with its error.
 */
function parsed<T>(input: ReadStream, stage: Duplex): AsyncIterable<T> {
  return pipeline(input, stage, () => {});
}

/** The rows of a CSV file under its header, or under the columns given (a file without a header). */
async function* csvRows(
  input: ReadStream,
  file: string,
  columns?: readonly string[],
): AsyncGenerator<Record<string, string>> {
  const options = columns ? { ...CSV_OPTIONS, columns: [...columns] } : { ...CSV_OPTIONS };
  const rows = parsed<Record<string, string>>(input, parseCsv(options));
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
