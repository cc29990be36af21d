import { type ForeignRecord, mapMembers } from './foreign-record.js';

const STANDARD = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'email',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
] as const;
const MEMBERS: Record<string, string> = Object.fromEntries(STANDARD.map((name) => [name, name]));
const BOOLEANS = new Set(['email_verified', 'phone_number_verified']);

/**
 * A row of Cognito's user CSV (the header of its import template): the standard attributes, the
 * verified flags, `address` as `address.formatted` and `custom:<name>` as custom attributes.
 * Cognito exports no password hashes: its users set a new password. `cognito:username`,
 * `cognito:mfa_enabled` and `updated_at` have no place here.
 */
export function fromCognito(row: Readonly<Record<string, string>>): ForeignRecord {
  const handled = new Set([
    ...BOOLEANS,
    'address',
    ...Object.keys(row).filter((c) => c.startsWith('custom:')),
  ]);
  const { record, unmapped } = mapMembers(row, MEMBERS, handled);
  for (const flag of BOOLEANS) {
    const cell = row[flag]?.trim().toLowerCase();
    if (cell === 'true' || cell === 'false') record[flag] = cell === 'true';
    else if (cell) unmapped.push(flag);
  }
  if (row.address) record.address = { formatted: row.address };
  const custom: Record<string, string> = {};
  for (const [column, cell] of Object.entries(row)) {
    if (column.startsWith('custom:') && cell !== '') custom[column.slice('custom:'.length)] = cell;
  }
  if (Object.keys(custom).length > 0) record.custom_attributes = custom;
  return { record, unmapped };
}
