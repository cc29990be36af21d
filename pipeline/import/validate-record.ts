import type { Transform } from 'node:stream';
import {
  type ImportIdentifier,
  type ImportRecord,
  importRecordValidator,
  type SchemaCause,
  schemaCauses,
} from '../../schemas/index.js';
import type { LoginIdKey, ProjectConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { KEY_OF_ATTRIBUTE, LOGIN_ID_ATTRIBUTES } from '../identity/login-id-attributes.js';
import { normalizeEmail, normalizePhone, normalizeUsername } from '../identity/normalize.js';
import { unstorableStrings } from '../storable-text.js';
import { streamStage } from '../stream-stage.js';
import { readMfa, readSecrets, readSub, readValidity, type Validity } from './account-members.js';
import { customAttributeChecks } from './custom-attributes.js';
import { mergeLoginIds, type Normalizers, type OAuthIdentity, readIdentities } from './identity-members.js';
import type { IndexedRecord } from './parse-records.js';
import type { UserState } from './user-state.js';

/** A record that passed validation, with its login id values normalized (null: to delete). */
export interface ValidRecord {
  readonly record: ImportRecord;
  /**
   * Normalized login ids by key, those of `identities` first in their order; a key is absent
   * when the record does not mention it.
   */
  readonly loginIds: ReadonlyMap<LoginIdKey, { value: string; original: string } | null>;
  /** The user id to keep (`sub`, lower case). */
  readonly sub?: string;
  /** The OAuth connections of `identities`; undefined when the record has no `identities`. */
  readonly oauth?: readonly OAuthIdentity[];
  /** Second-factor email and phone (from `mfa.email` or `mfa.emails`; null: to remove). */
  readonly mfaEmail?: string | null;
  readonly mfaPhone?: string | null;
  /** The account's validity period (UTC; null: to remove). */
  readonly validity: Validity;
  /** The password hashes as stored (password-formats.ts), when the password expires, and the TOTP secrets. */
  readonly secrets: UserState['secrets'];
}

/** A validator of records for one import: schema and formats, per the project's configuration. */
export type RecordValidator = (
  raw: unknown,
) => { ok: true; valid: ValidRecord } | { ok: false; error: ApiError };

/** Compiles the record checks for an identifier: the JSON Schema, then formats and custom attributes. */
export function recordValidator(identifier: ImportIdentifier, project: ProjectConfig): RecordValidator {
  const schema = importRecordValidator(identifier);
  const customAttributes = customAttributeChecks(project.customAttributes);
  const caseSensitive = (key: LoginIdKey) => project.loginIdKeys.get(key)?.caseSensitive ?? false;
  const normalizers: Normalizers = {
    email: (v) => normalizeEmail(v, caseSensitive('email')),
    username: (v) => normalizeUsername(v, caseSensitive('username')),
    phone: (v) => normalizePhone(v),
  };

  return (raw) => {
    // Postgres cannot store NUL or an unpaired surrogate: such a record fails here, alone.
    const unstorable: SchemaCause[] = unstorableStrings(raw).map((location) => ({
      location,
      kind: 'storableText',
      details: { message: 'must not contain NUL or unpaired surrogate characters' },
    }));
    if (!schema(raw)) return { ok: false, error: validationFailed([...schemaCauses(schema), ...unstorable]) };
    const record = raw;
    const causes: SchemaCause[] = unstorable;
    const loginIds = new Map<LoginIdKey, { value: string; original: string } | null>();
    for (const [member, key] of LOGIN_ID_ATTRIBUTES) {
      const value = record[member];
      if (value === undefined) continue;
      if (value === null) {
        loginIds.set(key, null);
        continue;
      }
      if (!project.loginIdKeys.has(key)) {
        causes.push({
          location: `/${member}`,
          kind: 'loginID',
          details: { message: `login id key ${key} is not enabled` },
        });
        continue;
      }
      const normalized = normalizers[key](value);
      if (normalized.ok) loginIds.set(key, { value: normalized.value, original: value });
      else causes.push({ location: `/${member}`, kind: 'format', details: { message: normalized.problem } });
    }
    const identities = readIdentities(record, project, normalizers, causes);
    const sub = readSub(record, causes);
    const mfa = readMfa(record, causes);
    const secrets = readSecrets(record, project, causes);
    const validity = readValidity(record, causes);
    for (const [name, value] of Object.entries(record.custom_attributes ?? {})) {
      const check = customAttributes.get(name);
      if (!check || value === null) continue;
      const problem = check(value);
      if (problem)
        causes.push({ location: `/custom_attributes/${name}`, kind: 'type', details: { message: problem } });
    }
    if (causes.length > 0) return { ok: false, error: validationFailed(causes) };
    return {
      ok: true,
      valid: {
        record,
        loginIds: mergeLoginIds(identities.loginIds, loginIds),
        ...(sub === undefined ? {} : { sub }),
        ...(identities.oauth === undefined ? {} : { oauth: identities.oauth }),
        ...mfa,
        validity,
        secrets,
      },
    };
  };
}

/** A record of a batch, checked once against its schema and formats. */
export interface PreparedRecord {
  readonly index: number;
  readonly raw: unknown;
  readonly checked: ReturnType<RecordValidator>;
  /** The index of the nearest earlier record of the request with the same identifier value. */
  readonly repeats?: number;
  /** A record of an ndjson or CSV file: its line. */
  readonly line?: number;
  /** Another system's user: the members of it its conversion left out. */
  readonly unmapped?: readonly string[];
}

/**
 * Validates one record (the validation stage's function, before any batch transaction). A check
 * that throws on what the schema let through fails that record alone, as one the service cannot
 * read: no record's content can end its task, still less its process.
 */
export function prepareRecord(record: IndexedRecord, validate: RecordValidator): PreparedRecord {
  let checked: ReturnType<RecordValidator>;
  if (record.problem !== undefined) {
    const cause = { location: '', kind: 'unreadable', details: { message: record.problem } };
    return {
      index: record.index,
      raw: record.raw,
      checked: { ok: false, error: validationFailed([cause]) },
      ...fileNotes(record),
    };
  }
  try {
    checked = validate(record.raw);
  } catch {
    checked = {
      ok: false,
      error: validationFailed([
        { location: '', kind: 'unreadable', details: { message: 'the record could not be read' } },
      ]),
    };
  }
  return { index: record.index, raw: record.raw, checked, ...fileNotes(record) };
}

/** What a record of a file carries beside itself: its line, the members its conversion left out. */
function fileNotes(record: IndexedRecord): Pick<PreparedRecord, 'line' | 'unmapped'> {
  return {
    ...(record.line === undefined ? {} : { line: record.line }),
    ...(record.unmapped === undefined ? {} : { unmapped: record.unmapped }),
  };
}

/** The causes a failed record's detail lists; the rest are counted in `causes_omitted`. */
export const MAX_RECORD_CAUSES = 20;

function validationFailed(causes: SchemaCause[]): ApiError {
  const omitted = causes.length - MAX_RECORD_CAUSES;
  return new ApiError('ValidationFailed', 'invalid import record', {
    causes: causes.slice(0, MAX_RECORD_CAUSES),
    ...(omitted > 0 ? { causes_omitted: omitted } : {}),
  });
}

/**
 * The validation stage: each record checked once, before the batch transactions (which then only
 * plan and write, and may be retried record by record without checking anything again).
 */
export function validateRecords(validate: RecordValidator): Transform {
  return streamStage({ objectMode: true, highWaterMark: 64 }, (record: IndexedRecord) =>
    prepareRecord(record, validate),
  );
}

/**
 * Marks each record whose identifier value an earlier record of the request has (`repeats`: the
 * nearest earlier index), whichever batch each falls in. Sees every record, those an earlier
 * attempt applied too, so a resumed task marks the same records.
 */
export function markRepeatedIdentifiers(identifier: ImportIdentifier): Transform {
  const key = KEY_OF_ATTRIBUTE[identifier];
  const seen = new Map<string, number>();
  return streamStage({ objectMode: true, highWaterMark: 64 }, (record: PreparedRecord) => {
    const value = record.checked.ok ? record.checked.valid.loginIds.get(key)?.value : undefined;
    if (value === undefined) return record;
    const earlier = seen.get(value);
    seen.set(value, record.index);
    return earlier === undefined ? record : { ...record, repeats: earlier };
  });
}
