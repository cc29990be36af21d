import { utcInstant } from '../../schemas/date-time.js';
import type { ImportRecord, SchemaCause } from '../../schemas/index.js';
import { type PasswordInput, storedPasswordHash } from '../../schemas/password-formats.js';
import type { ProjectConfig } from '../config.js';
import { normalizeEmail, normalizePhone } from '../identity/normalize.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `sub`: a user id as an export writes it (a UUID), kept in lower case. */
export function readSub(record: ImportRecord, causes: SchemaCause[]): string | undefined {
  if (record.sub === undefined) return undefined;
  if (UUID.test(record.sub)) return record.sub.toLowerCase();
  causes.push({ location: '/sub', kind: 'format', details: { message: 'sub must be a user id (a UUID)' } });
  return undefined;
}

/** The account's validity period as a record sets it: a bound in UTC, null to remove, absent to keep. */
export interface Validity {
  readonly from?: string | null;
  readonly until?: string | null;
}

/** `account_valid_from` and `account_valid_until`; a period that ends before it begins fails. */
export function readValidity(record: ImportRecord, causes: SchemaCause[]): Validity {
  const { account_valid_from: from, account_valid_until: until } = record;
  const validity: { from?: string | null; until?: string | null } = {};
  if (from !== undefined) validity.from = from === null ? null : utcInstant(from);
  if (until !== undefined) validity.until = until === null ? null : utcInstant(until);
  if (
    typeof validity.from === 'string' &&
    typeof validity.until === 'string' &&
    validity.from > validity.until
  ) {
    causes.push({
      location: '/account_valid_until',
      kind: 'conflict',
      details: { message: 'account_valid_until is before account_valid_from' },
    });
  }
  return validity;
}

type MfaMembers = { mfaEmail?: string | null; mfaPhone?: string | null };

/**
 * The second-factor email and phone, from `mfa.email` / `mfa.phone_number` or from the export's
 * lists `mfa.emails` / `mfa.phone_numbers` (an empty list removes; one of the two forms only).
 */
export function readMfa(record: ImportRecord, causes: SchemaCause[]): MfaMembers {
  const mfa = record.mfa;
  if (!mfa) return {};
  const members: MfaMembers = {};
  const read = (
    one: 'email' | 'phone_number',
    list: 'emails' | 'phone_numbers',
    check: (v: string) => boolean,
  ) => {
    const single = mfa[one];
    const many = mfa[list];
    if (single !== undefined && many !== undefined) {
      causes.push({
        location: `/mfa/${list}`,
        kind: 'conflict',
        details: { message: `give mfa.${one} or mfa.${list}, not both` },
      });
      return undefined;
    }
    const value = many === undefined ? single : (many[0] ?? null);
    const location = many === undefined ? `/mfa/${one}` : `/mfa/${list}/0`;
    if (typeof value === 'string' && !check(value)) {
      const message =
        one === 'email' ? 'invalid email address' : 'phone number must be a valid number in E.164 format';
      causes.push({ location, kind: 'format', details: { message } });
    }
    return value;
  };
  const email = read('email', 'emails', (v) => normalizeEmail(v, true).ok);
  const phone = read('phone_number', 'phone_numbers', (v) => normalizePhone(v).ok);
  if (email !== undefined) members.mfaEmail = email;
  if (phone !== undefined) members.mfaPhone = phone;
  return members;
}

/**
 * The secrets a new user gets: each password hash checked in its format and turned into the
 * string stored, and the TOTP secrets of `mfa.totp` or the export's `mfa.totps`.
 */
export function readSecrets(
  record: ImportRecord,
  project: ProjectConfig,
  causes: SchemaCause[],
): { password?: string; passwordExpireAfter?: string; mfaPassword?: string; totpSecrets: string[] } {
  const stored = (input: PasswordInput | undefined, location: string): string | undefined => {
    if (input === undefined) return undefined;
    const result = storedPasswordHash(input, project.passwordHashes.firebaseScrypt);
    if (result.ok) return result.stored;
    causes.push({ location, kind: result.kind, details: { message: result.problem } });
    return undefined;
  };
  const password = stored(record.password, '/password/password_hash');
  const mfaPassword = stored(record.mfa?.password, '/mfa/password/password_hash');
  const { totp, totps } = record.mfa ?? {};
  if (totp !== undefined && totps !== undefined) {
    causes.push({
      location: '/mfa/totps',
      kind: 'conflict',
      details: { message: 'give mfa.totp or mfa.totps, not both' },
    });
  }
  const expireAfter = record.password?.expire_after;
  return {
    ...(password === undefined ? {} : { password }),
    ...(password === undefined || expireAfter === undefined
      ? {}
      : { passwordExpireAfter: utcInstant(expireAfter) }),
    ...(mfaPassword === undefined ? {} : { mfaPassword }),
    totpSecrets: (totps ?? (totp ? [totp] : [])).map((t) => t.secret),
  };
}
