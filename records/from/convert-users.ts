import type { FirebaseScryptParams } from '../../schemas/password-formats.js';
import { type FileRecord, jsonFileRecord, type RecordFormat } from '../file-records.js';
import { auth0CsvUser, fromAuth0, type PasswordHashes } from './auth0.js';
import { fromClerk } from './clerk.js';
import { cognitoRow, fromCognito } from './cognito.js';
import { CognitoMerge } from './cognito-merge.js';
import { FIREBASE_CSV_COLUMNS, firebaseCsvUser, fromFirebase } from './firebase.js';
import type { ForeignRecord, ForeignSystem } from './foreign-record.js';
import { fromKeycloak } from './keycloak.js';
import { applyMapping, providerAliases, type SourceMapping } from './source-mapping.js';

// One conversion of another system's users to import records, whoever reads the file: userctl
// (streaming it from disk), the console (holding it in the tab), and the service's file imports.

/** What a conversion is given beside the users: the run's mapping and each system's extras. */
export interface ConversionOptions {
  readonly mapping?: SourceMapping;
  /** Firebase's project hash parameters, when given with the file. */
  readonly firebase?: FirebaseScryptParams;
  /** The password hashes delivered beside an Auth0 export, by user id. */
  readonly auth0Hashes?: PasswordHashes;
}

/** A user of another system's file at its position, or why it cannot be read. */
export type SourceUser =
  | { readonly position: number; readonly user: Record<string, unknown> }
  | { readonly position: number; readonly problem: string };

/** Converts the users of one file, in file order, each to the record it becomes. */
export interface UserConversion {
  /** Whether every user must be seen once (`note`) before any is converted: Cognito's merge. */
  readonly readsTwice: boolean;
  note(item: SourceUser): void;
  convert(item: SourceUser): FileRecord;
}

/** Where a system's JSON file holds its users: a member of the document, or the document itself. */
export function usersMember(system: ForeignSystem): string | undefined {
  return { auth0: undefined, firebase: 'users', keycloak: 'users', cognito: 'Users', clerk: undefined }[
    system
  ];
}

/** The columns of a system's CSV when its file has no header row (Firebase's). */
export function csvColumnsOf(system: ForeignSystem): readonly string[] | undefined {
  return system === 'firebase' ? FIREBASE_CSV_COLUMNS : undefined;
}

/** A user as a system's own file format gives it, in the shape its mapping reads. */
export function sourceUser(
  system: ForeignSystem,
  format: RecordFormat,
  raw: Record<string, unknown>,
): Record<string, unknown> {
  if (system === 'cognito') return cognitoRow(raw);
  if (format !== 'csv') return raw;
  if (system === 'auth0') return auth0CsvUser(raw as Record<string, string>);
  if (system === 'firebase') return firebaseCsvUser(raw as Record<string, string>);
  return raw;
}

/** The conversion of one file of a system's users, with the run's mapping. */
export function userConversion(system: ForeignSystem, options: ConversionOptions = {}): UserConversion {
  const mapping = options.mapping ?? {};
  const aliases = providerAliases(system, mapping);
  const map: (user: Record<string, unknown>) => ForeignRecord = {
    auth0: (user: Record<string, unknown>) => fromAuth0(user, aliases, options.auth0Hashes),
    firebase: (user: Record<string, unknown>) => fromFirebase(user, aliases, options.firebase),
    cognito: (user: Record<string, unknown>) => fromCognito(user, aliases),
    keycloak: (user: Record<string, unknown>) => fromKeycloak(user, aliases),
    clerk: (user: Record<string, unknown>) => fromClerk(user as Record<string, string>),
  }[system];
  const merge = system === 'cognito' ? new CognitoMerge(aliases) : undefined;
  return {
    readsTwice: merge !== undefined,
    note: (item) => {
      if ('user' in item) merge?.add(item.position, item.user);
    },
    convert: (item) => {
      if ('problem' in item) return item;
      const { position, user } = item;
      const source = Object.keys(user).filter(
        (k) => user[k] !== undefined && user[k] !== null && user[k] !== '',
      );
      const place = merge?.placeOf(position, user);
      if (place && 'mergedInto' in place) return { position, mergedInto: place.mergedInto, source };
      const { record, unmapped } = applyMapping(system, user, map(user), mapping);
      if (place && place.identities.length > 0)
        record.identities = withIdentities(record.identities, place.identities);
      return { position, record, source, ...(unmapped.length > 0 ? { unmapped } : {}) };
    },
  };
}

/**
 * The records of a whole file's text of another system (the console holds the file): its users
 * as its own format holds them, converted. Throws for a file that is not of that format.
 */
export function foreignTextRecords(
  text: string,
  format: RecordFormat,
  system: ForeignSystem,
  csvRows: (text: string, columns?: readonly string[]) => Record<string, string>[],
  options: ConversionOptions = {},
): FileRecord[] {
  let read: FileRecord[];
  if (format === 'csv')
    read = csvRows(text, csvColumnsOf(system)).map((row, position) => ({ position, record: row }));
  else if (format === 'ndjson')
    read = text
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '')
      .map((line, position) => jsonFileRecord(position, () => JSON.parse(line)));
  else {
    const document: unknown = JSON.parse(text);
    const member = usersMember(system);
    const list = member === undefined ? document : (document as Record<string, unknown> | null)?.[member];
    if (!Array.isArray(list))
      throw new Error(member ? `the file has no "${member}" array` : 'the file is not a JSON array');
    read = list.map((value, position) => jsonFileRecord(position, () => value));
  }
  const users: SourceUser[] = read.map((item) =>
    'record' in item
      ? { position: item.position, user: sourceUser(system, format, item.record) }
      : (item as SourceUser),
  );
  const conversion = userConversion(system, options);
  if (conversion.readsTwice) for (const item of users) conversion.note(item);
  return users.map((item) => conversion.convert(item));
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
