import type { ImportRecord } from '../../schemas/index.js';
import { LEGACY_PASSWORD_TYPES } from '../../schemas/password-formats.js';
import type { ProjectConfig } from '../config.js';

/** A warning of an import detail: `{message}` with the exact texts of docs/decisions.md. */
export interface ImportWarning {
  readonly message: string;
}

const NULL_ON_INSERT = ['email', 'phone_number', 'preferred_username'] as const;
const VERIFIED_FLAGS = [
  ['email_verified', 'email'],
  ['phone_number_verified', 'phone_number'],
] as const;

/** Warnings of a record that inserts a user: values that have no effect on a new user. */
export function insertWarnings(record: ImportRecord, project: ProjectConfig): ImportWarning[] {
  const warnings: ImportWarning[] = [];
  for (const member of NULL_ON_INSERT) {
    if (record[member] === null) warnings.push({ message: `${member} = null has no effect in insert.` });
  }
  if (record.mfa?.email === null) warnings.push({ message: 'mfa.email = null has no effect in insert.' });
  if (record.mfa?.phone_number === null)
    warnings.push({ message: 'mfa.phone_number = null has no effect in insert.' });
  for (const [flag, member] of VERIFIED_FLAGS) {
    if (record[flag] === false) warnings.push({ message: `${flag} = false has no effect in insert.` });
    else if (record[flag] === true && typeof record[member] !== 'string') {
      warnings.push({ message: `${flag} = true has no effect when ${member} is absent.` });
    }
  }
  if (record.disabled === false) warnings.push({ message: 'disabled = false has no effect in insert.' });
  for (const [member, password] of [
    ['password', record.password],
    ['mfa.password', record.mfa?.password],
  ] as const) {
    if (password && LEGACY_PASSWORD_TYPES.has(password.type)) {
      warnings.push({
        message: `${member} is a legacy ${password.type} hash: ask the user to set a new password.`,
      });
    }
  }
  return [...warnings, ...countWarnings(record), ...customAttributeWarnings(record, project)];
}

/** Warnings of a record that updates an existing user: secrets that a later import cannot add. */
export function updateWarnings(record: ImportRecord, project: ProjectConfig): ImportWarning[] {
  const warnings: ImportWarning[] = [];
  if (record.password !== undefined)
    warnings.push({ message: 'password is ignored because the user exists already.' });
  if (record.mfa?.password !== undefined) {
    warnings.push({ message: 'mfa.password is ignored because the user exists already.' });
  }
  if (record.mfa?.totp !== undefined)
    warnings.push({ message: 'mfa.totp is ignored because the user exists already.' });
  if (record.mfa?.totps !== undefined && record.mfa.totps.length > 0)
    warnings.push({ message: 'mfa.totps is ignored because the user exists already.' });
  return [...warnings, ...countWarnings(record), ...customAttributeWarnings(record, project)];
}

/** The warning of a record whose identifier value an earlier record of the same request has. */
export function repeatWarning(identifier: string, earlier: number): ImportWarning {
  return { message: `${identifier} repeats record ${earlier}; the records apply in request order.` };
}

/** The warning of a skipped record (upsert false and the user exists). */
export const SKIP_WARNING: ImportWarning = { message: 'skipping because upsert = false and user exists' };

/** The export's counts of biometrics and passkeys: nothing here can hold them. */
function countWarnings(record: ImportRecord): ImportWarning[] {
  const warnings: ImportWarning[] = [];
  if (record.biometric_count)
    warnings.push({
      message: `biometric_count is ignored: ${record.biometric_count} biometrics cannot be imported.`,
    });
  if (record.passkey_count)
    warnings.push({
      message: `passkey_count is ignored: ${record.passkey_count} passkeys cannot be imported.`,
    });
  return warnings;
}

function customAttributeWarnings(record: ImportRecord, project: ProjectConfig): ImportWarning[] {
  return Object.keys(record.custom_attributes ?? {})
    .filter((name) => !project.customAttributes.has(name))
    .map((name) => ({ message: `custom_attributes.${name} is not defined.` }));
}

/** The warning of another system's user whose conversion left members out (`from`): their paths. */
export function unmappedWarning(unmapped: readonly string[]): ImportWarning {
  return { message: `members of the source user left out: ${unmapped.join(', ')}.` };
}
