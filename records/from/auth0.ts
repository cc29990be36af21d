import { type ForeignRecord, isObject, jsonValue, mapMembers, oauthIdentity } from './foreign-record.js';

/** The password hashes delivered beside an Auth0 export, taken by the user id they belong to. */
export interface PasswordHashes {
  take(userId: unknown): string | undefined;
}

const MEMBERS: Record<string, string> = {
  email: 'email',
  email_verified: 'email_verified',
  username: 'preferred_username',
  phone_number: 'phone_number',
  phone_verified: 'phone_number_verified',
  name: 'name',
  given_name: 'given_name',
  family_name: 'family_name',
  nickname: 'nickname',
  picture: 'picture',
  blocked: 'disabled',
};
const HANDLED = new Set([
  'password_hash',
  'passwordHash',
  'custom_password_hash',
  'mfa_factors',
  'user_metadata',
  'identities',
]);

/**
 * A user of Auth0's user export (ndjson) or bulk-import JSON: profile members, `blocked`, social
 * `identities` as OAuth connections (under the run's provider aliases),
 * `password_hash` (bcrypt) and `custom_password_hash` (argon2, bcrypt, pbkdf2, salted SHA-256,
 * SHA-512 and MD5), `mfa_factors` (TOTP, phone, email) and `user_metadata` as custom attributes.
 * The bcrypt hash of a user of the export job comes from the hash file Auth0 support delivers
 * (`hashes`, joined by `user_id`), or from a line of that file read as a user (`passwordHash`).
 * Auth0's own ids, other connections, `app_metadata` and login statistics are listed, unless the
 * run's mapping takes them (roles from `app_metadata`, the user id into a custom attribute).
 */
export function fromAuth0(
  user: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
  hashes?: PasswordHashes,
): ForeignRecord {
  const { record, unmapped } = mapMembers(user, MEMBERS, HANDLED);
  const bcrypt = [user.password_hash, user.passwordHash, hashes?.take(user.user_id)].find(
    (hash): hash is string => typeof hash === 'string',
  );
  if (bcrypt !== undefined) record.password = { type: 'bcrypt', password_hash: bcrypt };
  if (user.custom_password_hash !== undefined) {
    const password = customPasswordHash(user.custom_password_hash);
    if (password) record.password = password;
    else unmapped.push('custom_password_hash');
  }
  if (Array.isArray(user.identities)) {
    const oauth = user.identities.flatMap((identity: unknown, i) => {
      const connection = oauthConnection(identity, aliases);
      if (connection === 'database') return [];
      if (connection === undefined) unmapped.push(`identities/${i}`);
      return connection === undefined ? [] : [connection];
    });
    if (oauth.length > 0) record.identities = oauth;
  } else if (user.identities !== undefined) unmapped.push('identities');
  if (isObject(user.user_metadata)) record.custom_attributes = { ...user.user_metadata };
  else if (user.user_metadata !== undefined) unmapped.push('user_metadata');
  if (Array.isArray(user.mfa_factors)) {
    const mfa: Record<string, unknown> = {};
    const totps: { secret: string }[] = [];
    user.mfa_factors.forEach((factor: unknown, i) => {
      const f = isObject(factor) ? factor : {};
      const value = (key: string, member: string) => (isObject(f[key]) ? f[key][member] : undefined);
      if (typeof value('totp', 'secret') === 'string')
        totps.push({ secret: value('totp', 'secret') as string });
      else if (typeof value('phone', 'value') === 'string' && !mfa.phone_number)
        mfa.phone_number = value('phone', 'value');
      else if (typeof value('email', 'value') === 'string' && !mfa.email) mfa.email = value('email', 'value');
      else unmapped.push(`mfa_factors/${i}`);
    });
    if (totps.length > 0) mfa.totps = totps;
    if (Object.keys(mfa).length > 0) record.mfa = mfa;
  }
  return { record, unmapped };
}

/** An Auth0 identity as an OAuth connection of the record; `database` for Auth0's own; undefined: no place here. */
function oauthConnection(
  identity: unknown,
  aliases: Readonly<Record<string, string>>,
): Record<string, unknown> | 'database' | undefined {
  if (!isObject(identity) || typeof identity.provider !== 'string') return undefined;
  if (identity.provider === 'auth0') return 'database';
  const alias = aliases[identity.provider];
  const subject = identity.user_id;
  if (!alias || (typeof subject !== 'string' && typeof subject !== 'number')) return undefined;
  return oauthIdentity(
    alias,
    String(subject),
    isObject(identity.profileData) ? identity.profileData : undefined,
  );
}

const SALTED: Record<string, string> = {
  sha256: 'sha256_salted',
  sha512: 'sha512_salted',
  md5: 'md5_salted',
};

/** Auth0's `custom_password_hash` as a record's password, or undefined when it has no equivalent here. */
function customPasswordHash(custom: unknown): Record<string, unknown> | undefined {
  if (!isObject(custom) || !isObject(custom.hash) || typeof custom.hash.value !== 'string') return undefined;
  const { algorithm } = custom;
  const value = custom.hash.value;
  if (algorithm === 'bcrypt') return { type: 'bcrypt', password_hash: value };
  if (algorithm === 'argon2') {
    const type = value.startsWith('$argon2id$')
      ? 'argon2id'
      : value.startsWith('$argon2i$')
        ? 'argon2i'
        : undefined;
    return type ? { type, password_hash: value } : undefined;
  }
  if (algorithm === 'pbkdf2') {
    const digest = /^\$pbkdf2-(sha256|sha512)\$/.exec(value)?.[1];
    return digest ? { type: `pbkdf2_${digest}`, password_hash: value } : undefined;
  }
  const type = typeof algorithm === 'string' ? SALTED[algorithm] : undefined;
  if (!type || !isObject(custom.salt) || typeof custom.salt.value !== 'string') return undefined;
  const encoding = custom.hash.encoding ?? 'hex';
  if (encoding !== 'hex' && encoding !== 'base64') return undefined;
  const saltEncoding = custom.salt.encoding ?? 'utf8';
  if (!['utf8', 'hex', 'base64'].includes(String(saltEncoding))) return undefined;
  return {
    type,
    password_hash: value,
    salt: custom.salt.value,
    salt_encoding: saltEncoding,
    salt_position: custom.salt.position === 'suffix' ? 'suffix' : 'prefix',
  };
}

/** Members of Auth0's export that are booleans (its CSV writes them as text). */
const AUTH0_BOOLEANS = new Set(['email_verified', 'phone_verified', 'blocked']);

/**
 * A row of the export job's CSV as the user its ndjson would give: the `'` Auth0 puts before a
 * text value as a guard against spreadsheet formulas taken off, booleans read, lists and objects
 * written as JSON read, and `user_metadata.<name>` columns (the CSV carries no whole metadata
 * object) nested. Columns such as `identities[0].connection` stay as they are and are listed.
 */
export function auth0CsvUser(row: Readonly<Record<string, string>>): Record<string, unknown> {
  const user: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(row)) {
    const cell = raw.startsWith("'") ? raw.slice(1) : raw;
    if (cell === '') continue;
    let value: unknown = cell;
    if (AUTH0_BOOLEANS.has(column) && /^(true|false)$/i.test(cell)) value = cell.toLowerCase() === 'true';
    else if (/^[[{]/.test(cell)) value = jsonValue(cell) ?? cell;
    const dot = column.indexOf('.');
    const [top, member] = dot > 0 ? [column.slice(0, dot), column.slice(dot + 1)] : [column, ''];
    if (member && /^(user|app)_metadata$/.test(top)) {
      const metadata = isObject(user[top]) ? user[top] : {};
      metadata[member] = value;
      user[top] = metadata;
    } else user[column] = value;
  }
  return user;
}
