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
import { auth0CsvUser, fromAuth0 } from './from/auth0.js';
import { Auth0Hashes } from './from/auth0-hashes.js';
import { fromClerk } from './from/clerk.js';
import { cognitoRow, fromCognito } from './from/cognito.js';
import { CognitoMerge } from './from/cognito-merge.js';
import { FIREBASE_CSV_COLUMNS, firebaseCsvUser, fromFirebase } from './from/firebase.js';
import type { FirebaseHashFlags, ForeignRecord, ForeignSystem } from './from/foreign-record.js';
import { fromKeycloak } from './from/keycloak.js';
import { applyMapping, providerAliases, type SourceMapping } from './from/source-mapping.js';

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

/** A user of another system's file at its position, or why it cannot be read. */
type SourceUser =
  | { readonly position: number; readonly user: Record<string, unknown> }
  | { readonly position: number; readonly problem: string };

/**
 * Another system's users mapped to records, with the run's mapping applied: Auth0's ndjson or CSV
 * export or bulk-import JSON array, Firebase's `auth:export` JSON or CSV, Cognito's `list-users`
 * JSON or user CSV (its social users merged into the user of their email, which takes a first
 * reading of the file), Keycloak's realm or users files and Clerk's users CSV.
 */
async function* readForeignRecords(
  input: ReadStream,
  file: string,
  format: RecordFormat,
  from: ForeignFile,
  hashes: Auth0Hashes | undefined,
): AsyncGenerator<FileRecord> {
  const mapping = from.mapping ?? {};
  const aliases = providerAliases(from.system, mapping);
  const map: (user: Record<string, unknown>) => ForeignRecord = {
    auth0: (user: Record<string, unknown>) => fromAuth0(user, aliases, hashes),
    firebase: (user: Record<string, unknown>) => fromFirebase(user, aliases, from.firebase),
    cognito: (user: Record<string, unknown>) => fromCognito(user, aliases),
    keycloak: (user: Record<string, unknown>) => fromKeycloak(user, aliases),
    clerk: (user: Record<string, unknown>) => fromClerk(user as Record<string, string>),
  }[from.system];
  let merge: CognitoMerge | undefined;
  if (from.system === 'cognito') {
    merge = new CognitoMerge(aliases);
    for await (const item of sourceUsers(await openFile(file), file, format, from.system))
      if ('user' in item) merge.add(item.position, item.user);
  }
  for await (const item of sourceUsers(input, file, format, from.system)) {
    if ('problem' in item) {
      yield item;
      continue;
    }
    const { position, user } = item;
    const source = Object.keys(user).filter(
      (k) => user[k] !== undefined && user[k] !== null && user[k] !== '',
    );
    const place = merge?.placeOf(position, user);
    if (place && 'mergedInto' in place) {
      yield { position, mergedInto: place.mergedInto, source };
      continue;
    }
    const { record, unmapped } = applyMapping(from.system, user, map(user), mapping);
    if (place && place.identities.length > 0)
      record.identities = withIdentities(record.identities, place.identities);
    yield { position, record, source, ...(unmapped.length > 0 ? { unmapped } : {}) };
  }
}

/** A record's identities with others added, each connection once. */
function withIdentities(own: unknown, more: readonly Record<string, unknown>[]): unknown[] {
  const all = [...(Array.isArray(own) ? own : []), ...more];
  const seen = new Set<string>();
  return all.filter((identity) => {
    const key = JSON.stringify(identity);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The users of another system's file as its own format holds them. */
async function* sourceUsers(
  input: ReadStream,
  file: string,
  format: RecordFormat,
  system: ForeignSystem,
): AsyncGenerator<SourceUser> {
  let position = 0;
  if (format === 'csv') {
    const rows = system === 'firebase' ? csvRows(input, file, FIREBASE_CSV_COLUMNS) : csvRows(input, file);
    const user = {
      auth0: auth0CsvUser,
      firebase: firebaseCsvUser,
      cognito: cognitoRow,
      clerk: (r: Record<string, string>) => r,
      keycloak: (r: Record<string, string>) => r,
    }[system];
    for await (const row of rows) yield { position: position++, user: user(row) };
    return;
  }
  if (system === 'auth0') {
    for await (const item of readRecords(input, file, format))
      yield 'record' in item ? { position: item.position, user: item.record } : (item as SourceUser);
    return;
  }
  // Firebase's auth:export and Keycloak's realm (or users) files hold their users in `users`,
  // Cognito's list-users output in `Users`.
  const users = parsed<{ value: unknown }>(
    input,
    chain(
      [
        parser({ streamValues: false }),
        pick({ filter: system === 'cognito' ? 'Users' : 'users' }),
        streamArray(),
      ],
      {
        writableObjectMode: false,
        readableObjectMode: true,
      },
    ),
  );
  try {
    for await (const { value } of users) {
      const read = jsonFileRecord(position++, () => value);
      if (!('record' in read)) yield read as SourceUser;
      else
        yield { position: read.position, user: system === 'cognito' ? cognitoRow(read.record) : read.record };
    }
  } catch (err) {
    const kind = {
      cognito: 'Cognito list-users',
      keycloak: 'Keycloak realm or users',
      firebase: 'Firebase auth:export',
    }[system as 'cognito' | 'keycloak' | 'firebase'];
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
