import { type ForeignRecord, isObject, jsonValue, mapMembers, oauthIdentity } from './foreign-record.js';

// Cognito has no export file. What users have is `aws cognito-idp list-users` JSON
// (`{"Users": [{"Username", "Attributes": [{"Name", "Value"}], "Enabled", "UserStatus", ...}]}`,
// https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_ListUsers.html)
// or the same written as CSV under the header of Cognito's import template. Neither carries
// password hashes, groups or TOTP secrets. A user who signed in with a social provider is a user
// of its own (`Google_<sub>`, status EXTERNAL_PROVIDER) whose `identities` attribute names the
// provider; it is merged into the user of the same email.

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

/** What a Cognito user file cannot carry, said before a run and in its plan. */
export const COGNITO_NOTICE =
  'Cognito exports no password hashes, groups or TOTP secrets: users who signed in with a password ' +
  'set a new one (the forgot-password flow) and enrol their authenticator app again; give groups ' +
  'as roles or groups in records of your own (aws cognito-idp admin-list-groups-for-user).';

/**
 * A user of `list-users` JSON as a row of the CSV: its attributes by name beside `Username`,
 * `Enabled`, `UserStatus` and its dates.
 */
export function cognitoRow(user: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { Attributes: attributes, ...rest } = user;
  const row: Record<string, unknown> = { ...rest };
  for (const attribute of Array.isArray(attributes) ? attributes : []) {
    if (isObject(attribute) && typeof attribute.Name === 'string') row[attribute.Name] = attribute.Value;
  }
  return row;
}

/** Whether a row is the user Cognito made for a social sign-in (`Google_<sub>`). */
export function isExternalUser(row: Readonly<Record<string, unknown>>): boolean {
  return (
    row.UserStatus === 'EXTERNAL_PROVIDER' || (row.UserStatus === undefined && row.identities !== undefined)
  );
}

/** The OAuth connections a row's `identities` attribute names (providers with an alias). */
export function cognitoIdentities(
  row: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
): { identities: Record<string, unknown>[]; unmapped: string[] } {
  const identities: Record<string, unknown>[] = [];
  const unmapped: string[] = [];
  if (row.identities === undefined || row.identities === '') return { identities, unmapped };
  const list = typeof row.identities === 'string' ? jsonValue(row.identities) : undefined;
  if (!Array.isArray(list)) return { identities, unmapped: ['identities'] };
  list.forEach((item, i) => {
    const alias =
      isObject(item) && typeof item.providerName === 'string' ? aliases[item.providerName] : undefined;
    const subject = isObject(item) ? item.userId : undefined;
    if (alias && (typeof subject === 'string' || typeof subject === 'number') && subject !== '')
      identities.push(oauthIdentity(alias, String(subject)));
    else unmapped.push(`identities/${i}`);
  });
  return { identities, unmapped };
}

/**
 * A Cognito user (a row of the CSV, or a `list-users` user as `cognitoRow` makes it): the standard
 * attributes, the verified flags, `address` as `address.formatted`, `custom:<name>` as custom
 * attributes, `Enabled: false` as disabled and the `identities` of a social sign-in as OAuth
 * connections. Cognito's ids, status and dates are listed, unless the run keeps them in custom
 * attributes.
 */
export function fromCognito(
  row: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
): ForeignRecord {
  const handled = new Set([
    ...BOOLEANS,
    'address',
    'Enabled',
    'identities',
    ...Object.keys(row).filter((c) => c.startsWith('custom:')),
  ]);
  const { record, unmapped } = mapMembers(row, MEMBERS, handled);
  for (const flag of BOOLEANS) {
    const cell = String(row[flag] ?? '')
      .trim()
      .toLowerCase();
    if (cell === 'true' || cell === 'false') record[flag] = cell === 'true';
    else if (cell) unmapped.push(flag);
  }
  if (row.address) record.address = { formatted: row.address };
  if (row.Enabled === false) record.disabled = true;
  const { identities, unmapped: others } = cognitoIdentities(row, aliases);
  if (identities.length > 0) record.identities = identities;
  unmapped.push(...others);
  const custom: Record<string, unknown> = {};
  for (const [column, cell] of Object.entries(row)) {
    if (column.startsWith('custom:') && cell !== '') custom[column.slice('custom:'.length)] = cell;
  }
  if (Object.keys(custom).length > 0) record.custom_attributes = custom;
  return { record, unmapped };
}
