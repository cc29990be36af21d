import { type ForeignRecord, mapMembers } from './foreign-record.js';

// Clerk's Dashboard export (Settings, User exports): a CSV with the columns id, first_name,
// last_name, username, primary_email_address, primary_phone_number, verified_email_addresses,
// unverified_email_addresses, verified_phone_numbers, unverified_phone_numbers, totp_secret,
// password_digest and password_hasher. It is the only Clerk export with password digests and TOTP
// secrets, and it carries no metadata, roles or social connections
// (https://clerk.com/docs/guides/development/migrating/export-from-clerk).

const MEMBERS: Record<string, string> = {
  first_name: 'given_name',
  last_name: 'family_name',
  username: 'preferred_username',
  primary_email_address: 'email',
  primary_phone_number: 'phone_number',
};
const HANDLED = new Set([
  'verified_email_addresses',
  'unverified_email_addresses',
  'verified_phone_numbers',
  'unverified_phone_numbers',
  'totp_secret',
  'password_digest',
  'password_hasher',
]);

/**
 * Clerk's password hashers as the service's password types; a digest of any other hasher is left
 * out and listed (a credential: it stops the run unless `--allow-loss password_digest`).
 */
const HASHERS: Readonly<Record<string, string>> = {
  bcrypt: 'bcrypt',
  argon2i: 'argon2i',
  argon2id: 'argon2id',
  pbkdf2_sha256: 'pbkdf2_sha256',
  pbkdf2_sha256_django: 'pbkdf2_sha256',
};

/** A cell's list of addresses or numbers (Clerk separates them with `|`, `,` or `;`). */
const listOf = (cell: string | undefined) =>
  (cell ?? '')
    .split(/[|,;]/)
    .map((v) => v.trim())
    .filter((v) => v !== '');

/**
 * A row of Clerk's users CSV: names, username, the primary email and phone as login ids (verified
 * when the verified list holds them), the password digest of a hasher the service verifies, and
 * the TOTP secret. Clerk's user id and the addresses besides the primary ones have no place here
 * (one email and one phone login id a user).
 */
export function fromClerk(row: Readonly<Record<string, string>>): ForeignRecord {
  const { record, unmapped } = mapMembers(row, MEMBERS, HANDLED);
  for (const [primary, verified, unverified, flag] of [
    ['primary_email_address', 'verified_email_addresses', 'unverified_email_addresses', 'email_verified'],
    ['primary_phone_number', 'verified_phone_numbers', 'unverified_phone_numbers', 'phone_number_verified'],
  ] as const) {
    const main = row[primary]?.trim().toLowerCase();
    const verifiedList = listOf(row[verified]).map((v) => v.toLowerCase());
    if (main) record[flag] = verifiedList.includes(main);
    if (verifiedList.some((v) => v !== main)) unmapped.push(verified);
    if (listOf(row[unverified]).some((v) => v.toLowerCase() !== main)) unmapped.push(unverified);
  }
  const digest = row.password_digest?.trim();
  if (digest) {
    const type = HASHERS[row.password_hasher?.trim() ?? ''];
    if (type) record.password = { type, password_hash: digest };
    else unmapped.push('password_digest');
  }
  const totp = row.totp_secret?.trim();
  if (totp) record.mfa = { totps: [{ secret: totp }] };
  return { record, unmapped };
}
