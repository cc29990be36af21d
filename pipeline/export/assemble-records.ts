import type { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { decodeCopyFields } from '../db/copy-text.js';
import { EngineError } from '../errors.js';
import { PROFILE_ATTRIBUTES } from '../identity/standard-attributes.js';
import { streamStage } from '../stream-stage.js';
import { RECORD_ARRAYS_IN_FLIGHT } from './stage-marks.js';
import { ROW_COLUMNS, ROW_KINDS, type RowKind } from './user-records-sql.js';

// A user's export record built from the plain rows of the records statement. The record is what
// `json_strip_nulls(json_build_object(...))` wrote when Postgres assembled it, as JavaScript reads
// that JSON: the same members in the same order (jsonb values keep jsonb's key order), no member
// whose value is null at any depth, nulls inside arrays kept.

/** An exported user's record: the spec's members, read by pointers and written as one JSON line. */
export type UserRecord = Record<string, unknown>;

/** A row's decoded fields: its kind, then its values in ROW_COLUMNS's order (null is SQL NULL). */
type Row = readonly (string | null)[];

/**
 * Where each column of a row of `kind` is among its fields. Rows stay the arrays they were decoded
 * into: an object per row, its members set by a name that changes from store to store, is slow to
 * build.
 */
function columnsOf<K extends RowKind>(kind: K): { readonly [C in (typeof ROW_COLUMNS)[K][number]]: number } {
  return Object.fromEntries(ROW_COLUMNS[kind].map((column, n) => [column, n + 1])) as {
    [C in (typeof ROW_COLUMNS)[K][number]]: number;
  };
}

const USER = columnsOf('user');
const IDENTITY = columnsOf('identity');
const ROLE = columnsOf('role');
const GROUP = columnsOf('group');
const AUTHENTICATOR = columnsOf('authenticator');
const VERIFIED_CLAIM = columnsOf('verified_claim');

/** What the assembly needs besides the rows: the issuer named in TOTP URIs. */
export interface AssemblyOptions {
  readonly totpIssuer: string;
  /**
   * The members a file reads (a CSV export's pointers start with them); without it, every member.
   * The members that cost the most to build (a list, a JSON text to read) are left out of a
   * record whose file does not read them.
   */
  readonly members?: ReadonlySet<string> | undefined;
}

/** The standard attributes of an exported user, in the order of the spec's pointer table. */
export const STANDARD_ATTRIBUTES = [
  'preferred_username',
  'email',
  'phone_number',
  'email_verified',
  'phone_number_verified',
  ...PROFILE_ATTRIBUTES,
] as const;

/** One user's rows, gathered until the next user's row. */
interface UserRows {
  readonly user: Row;
  readonly identities: Row[];
  readonly roles: string[];
  readonly groups: string[];
  readonly authenticators: Row[];
  readonly verifiedClaims: Row[];
}

/** The fields a row of each kind has that the assembly reads: its kind, then its values. */
const ROW_WIDTHS = ROW_KINDS.map((kind) => 1 + ROW_COLUMNS[kind].length);

/**
 * Gathers the statement's rows (COPY text lines) into records. Rows come user by user, the user's
 * own row first; `add` returns the previous user's record when a new user starts, `end` the last
 * one.
 */
export class RecordAssembler {
  private current: UserRows | undefined;

  constructor(private readonly options: AssemblyOptions) {}

  add(line: string): UserRecord | undefined {
    const number = line.charCodeAt(0) - 48;
    const kind = line.charCodeAt(1) === 9 ? ROW_KINDS[number] : undefined; // one digit, then a tab
    if (kind === undefined)
      throw new EngineError('RecordsRowUnexpected', `unexpected records row: kind ${line.split('\t', 1)[0]}`);
    const fields = decodeCopyFields(line, ROW_WIDTHS[number] as number);
    if (kind === 'user') {
      const done = this.end();
      this.current = {
        user: fields,
        identities: [],
        roles: [],
        groups: [],
        authenticators: [],
        verifiedClaims: [],
      };
      return done;
    }
    const rows = this.current;
    if (rows === undefined)
      throw new EngineError('RecordsRowUnexpected', `unexpected records row: a ${kind} before any user`);
    if (kind === 'identity') rows.identities.push(fields);
    else if (kind === 'role') rows.roles.push(field(fields, ROLE.key) as string);
    else if (kind === 'group') rows.groups.push(field(fields, GROUP.key) as string);
    else if (kind === 'authenticator') rows.authenticators.push(fields);
    else rows.verifiedClaims.push(fields);
    return undefined;
  }

  end(): UserRecord | undefined {
    const rows = this.current;
    this.current = undefined;
    return rows && assembleRecord(rows, this.options);
  }
}

function assembleRecord(rows: UserRows, options: AssemblyOptions): UserRecord {
  const { user } = rows;
  const standard = (parseJson(field(user, USER.standard_attributes), false) ?? {}) as Record<string, unknown>;
  const record: UserRecord = { sub: field(user, USER.id) };
  put(record, 'created_at', rfc3339Time(field(user, USER.created_at)));
  put(record, 'updated_at', rfc3339Time(field(user, USER.updated_at)));
  put(record, 'last_login_at', rfc3339Time(field(user, USER.last_login_at)));
  for (const name of STANDARD_ATTRIBUTES) {
    if (name === 'email_verified') put(record, name, isVerified(standard, 'email', rows.verifiedClaims));
    else if (name === 'phone_number_verified')
      put(record, name, isVerified(standard, 'phone_number', rows.verifiedClaims));
    else put(record, name, stripNulls(member(standard, name)));
  }
  record.roles = rows.roles;
  record.groups = rows.groups;
  record.disabled = field(user, USER.is_disabled) === 'true';
  put(record, 'account_valid_from', rfc3339Time(field(user, USER.account_valid_from)));
  put(record, 'account_valid_until', rfc3339Time(field(user, USER.account_valid_until)));
  if (wanted(options, 'password')) {
    const primary = rows.authenticators.find(
      (a) => field(a, AUTHENTICATOR.kind) === 'primary' && field(a, AUTHENTICATOR.type) === 'password',
    );
    put(record, 'password', primary && passwordOf(primary));
  }
  if (wanted(options, 'identities')) record.identities = rows.identities.map(identityOf);
  if (wanted(options, 'mfa')) record.mfa = mfaOf(rows, standard, options.totpIssuer);
  record.biometric_count = 0;
  record.passkey_count = 0;
  if (wanted(options, 'custom_attributes'))
    put(record, 'custom_attributes', parseJson(field(user, USER.custom_attributes), true));
  return record;
}

/** Whether the file reads a member of the records (AssemblyOptions.members). */
function wanted(options: AssemblyOptions, name: string): boolean {
  return options.members?.has(name) ?? true;
}

/** A column's value in a row (which holds every column of its kind: decodeCopyFields). */
function field(row: Row, at: number): string | null {
  return row[at] ?? null;
}

const TIME_TEXT = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00( BC)?$/;

/**
 * A timestamp's text in the records statement's transaction (`2026-01-02 03:04:05.5+00`: UTC, ISO
 * style) as the records write it, in RFC 3339 with microseconds (`2026-01-02T03:04:05.500000Z`):
 * the text of `to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`, which writes a
 * year before the common era without its ` BC` and an infinite time as null.
 */
export function rfc3339Time(text: string | null): string | null {
  if (text === null || text === 'infinity' || text === '-infinity') return null;
  // Most times have a fraction of six digits: `YYYY-MM-DD HH:MI:SS.ffffff+00`.
  if (
    text.length === 29 &&
    text.charCodeAt(10) === 32 &&
    text.charCodeAt(19) === 46 &&
    text.charCodeAt(26) === 43
  )
    return `${text.slice(0, 10)}T${text.slice(11, 26)}Z`;
  const parts = TIME_TEXT.exec(text);
  // The message names what was wrong, not the value: it reaches the task's error and the logs.
  if (parts === null)
    throw new EngineError('RecordsRowUnexpected', 'unexpected records row: a time not in UTC and ISO style');
  return `${parts[1]}T${parts[2]}.${(parts[3] ?? '').padEnd(6, '0')}Z`;
}

/** Sets a member unless its value is null or missing (json_strip_nulls). */
function put(target: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== null && value !== undefined) target[name] = value;
}

function member(object: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** A jsonb column's text as a value; `strip`: without null members (a text holding no "null" has none). */
function parseJson(text: string | null, strip: boolean): unknown {
  if (text === null) return null;
  if (text === '{}') return {};
  const value: unknown = JSON.parse(text);
  return strip && text.includes('null') ? stripNulls(value) : value;
}

/** json_strip_nulls: object members whose value is null are dropped at every depth; array items stay. */
function stripNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(stripNulls);
  const stripped: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) put(stripped, name, stripNulls(item));
  return stripped;
}

/** `->>`: a jsonb member as text (null when missing or null). */
function textMember(object: Record<string, unknown>, name: string): string | null {
  const value = member(object, name);
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `<claim>_verified`: set when the user has the claim, true when its current value is verified. */
function isVerified(
  standard: Record<string, unknown>,
  claim: 'email' | 'phone_number',
  verified: readonly Row[],
): boolean | undefined {
  if (!Object.hasOwn(standard, claim)) return undefined;
  const value = textMember(standard, claim);
  return verified.some(
    (v) => field(v, VERIFIED_CLAIM.name) === claim && field(v, VERIFIED_CLAIM.value) === value,
  );
}

/**
 * A stored password hash as the import takes it back: `{type, password_hash}` (password-formats.ts),
 * and `expire_after` when the password must be changed after a time.
 */
function passwordOf(authenticator: Row): UserRecord | undefined {
  const hash = field(authenticator, AUTHENTICATOR.password_hash);
  if (hash === null) return undefined;
  const type = hash.startsWith('$2') ? 'bcrypt' : (hash.split('$')[1] ?? '').replaceAll('-', '_');
  const expiry = rfc3339Time(field(authenticator, AUTHENTICATOR.expire_after));
  return expiry === null
    ? { type, password_hash: hash }
    : { type, password_hash: hash, expire_after: expiry };
}

function identityOf(identity: Row): UserRecord {
  const claims = parseJson(field(identity, IDENTITY.claims), false) as Record<string, unknown>;
  const type = field(identity, IDENTITY.type);
  if (type === 'login_id')
    return {
      type,
      login_id: {
        key: field(identity, IDENTITY.login_id_key),
        original_value: field(identity, IDENTITY.original_login_id),
        type: field(identity, IDENTITY.login_id_type),
        value: field(identity, IDENTITY.login_id),
      },
      claims: mergedClaims(claims, {
        email: field(identity, IDENTITY.email),
        phone_number: field(identity, IDENTITY.phone_number),
        preferred_username: field(identity, IDENTITY.preferred_username),
      }),
    };
  const oauth: UserRecord = {};
  put(oauth, 'provider_alias', field(identity, IDENTITY.provider_alias));
  put(oauth, 'provider_type', field(identity, IDENTITY.provider_type));
  put(oauth, 'provider_subject_id', field(identity, IDENTITY.provider_subject_id));
  oauth.user_profile = parseJson(field(identity, IDENTITY.profile), true) ?? {};
  return { type, oauth, claims: stripNulls(claims) };
}

/**
 * `jsonb_strip_nulls(claims || jsonb_strip_nulls(jsonb_build_object(additions)))`. A login id's
 * stored claims are most often empty: then the merge holds only additions, none of them null, and
 * there is nothing to strip.
 */
function mergedClaims(claims: Record<string, unknown>, additions: Record<string, string | null>): unknown {
  const merged = jsonbMerge(claims, additions);
  return hasMembers(claims) ? stripNulls(merged) : merged;
}

/** Whether a parsed JSON object has a member (without listing them). */
function hasMembers(object: Record<string, unknown>): boolean {
  for (const _ in object) return true;
  return false;
}

/**
 * `object || jsonb_strip_nulls(jsonb_build_object(additions))`: the additions that are not null
 * replace or join the object's members, and the result lists its members in jsonb's order (shorter
 * names first, then by their UTF-8 bytes), as the object read from jsonb already does.
 */
function jsonbMerge(object: Record<string, unknown>, additions: Record<string, string | null>): UserRecord {
  const names = Object.keys(object);
  const stored = names.length;
  for (const name in additions) {
    if (additions[name] !== null && !Object.hasOwn(object, name)) names.push(name);
  }
  if (names.length > stored && names.length > 1) names.sort(jsonbKeyOrder);
  const merged: UserRecord = {};
  for (const name of names) {
    const addition = Object.hasOwn(additions, name) ? additions[name] : null;
    merged[name] = addition ?? object[name];
  }
  return merged;
}

function jsonbKeyOrder(a: string, b: string): number {
  const bytesA = Buffer.from(a);
  const bytesB = Buffer.from(b);
  return bytesA.length - bytesB.length || Buffer.compare(bytesA, bytesB);
}

/** The user's second factors; the record always has `mfa`, with empty lists when there are none. */
function mfaOf(rows: UserRows, standard: Record<string, unknown>, issuer: string): UserRecord {
  const secondary = rows.authenticators.filter((a) => field(a, AUTHENTICATOR.kind) === 'secondary');
  // Most users have no second factor: nothing to sort into the lists, no label to find.
  if (secondary.length === 0) return { emails: [], phone_numbers: [], totps: [] };
  const ofType = (type: string) => secondary.filter((a) => field(a, AUTHENTICATOR.type) === type);
  const label = () =>
    textMember(standard, 'email') ??
    textMember(standard, 'phone_number') ??
    textMember(standard, 'preferred_username') ??
    (field(rows.user, USER.id) as string);
  const mfa: UserRecord = {
    emails: ofType('oob_otp_email').map((a) => field(a, AUTHENTICATOR.email)),
    phone_numbers: ofType('oob_otp_sms').map((a) => field(a, AUTHENTICATOR.phone)),
    totps: ofType('totp').map((a) => {
      const secret = field(a, AUTHENTICATOR.totp_secret) as string;
      return { secret, uri: totpUri(issuer, label(), secret) };
    }),
  };
  const password = secondary.find((a) => field(a, AUTHENTICATOR.type) === 'password');
  put(mfa, 'password', password && passwordOf(password));
  return mfa;
}

/** A TOTP `otpauth://` URI naming the issuer and the user. */
function totpUri(issuer: string, label: string, secret: string): string {
  const component = uriComponent(issuer);
  return `otpauth://totp/${component}:${uriComponent(label)}?algorithm=SHA1&digits=6&issuer=${component}&period=30&secret=${uriComponent(secret)}`;
}

/** Percent-encodes text as a URI component, keeping only RFC 3986's unreserved characters. */
function uriComponent(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The records statement's COPY text, chunk by chunk -> the records each chunk completes. A user's
 * rows may straddle two chunks (a character too): the record comes with the chunk that starts the
 * next user, or at the end.
 */
export class CopyRecords {
  private readonly decoder = new StringDecoder('utf8');
  private readonly assembler: RecordAssembler;
  private rest = '';

  constructor(options: AssemblyOptions) {
    this.assembler = new RecordAssembler(options);
  }

  read(chunk: Buffer): UserRecord[] {
    const [records = []] = this.batches(chunk, Number.POSITIVE_INFINITY);
    return records;
  }

  /**
   * The records the chunk completes, `size` at a time: a batch is used up before the next one is
   * assembled, so that its records are garbage before the young generation is next collected.
   */
  *batches(chunk: Buffer, size: number): Generator<UserRecord[]> {
    const lines = (this.rest + this.decoder.write(chunk)).split('\n');
    this.rest = lines.pop() ?? '';
    let records: UserRecord[] = [];
    for (const line of lines) {
      this.add(line, records);
      if (records.length < size) continue;
      yield records;
      records = [];
    }
    if (records.length > 0) yield records;
  }

  end(): UserRecord[] {
    const rest = this.rest + this.decoder.end();
    this.rest = '';
    const records: UserRecord[] = [];
    if (rest !== '') this.add(rest, records);
    const last = this.assembler.end();
    if (last !== undefined) records.push(last);
    return records;
  }

  private add(line: string, records: UserRecord[]): void {
    const record = this.assembler.add(line);
    if (record !== undefined) records.push(record);
  }
}

/** COPY text rows of the records statement -> records, pushed as one array per chunk received. */
export function assembleRecords(options: AssemblyOptions): Transform {
  const records = new CopyRecords(options);
  const some = (list: UserRecord[]) => (list.length > 0 ? list : undefined);
  return streamStage(
    { readableObjectMode: true, readableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT },
    (chunk: Buffer) => some(records.read(chunk)),
    () => some(records.end()),
  );
}
