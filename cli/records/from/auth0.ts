import type { Auth0Hashes } from './auth0-hashes.js';
import { type ForeignRecord, isObject, mapMembers, oauthIdentity } from './foreign-record.js';

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
 * Auth0's social connections (an identity's `provider`) as the service's OAuth provider aliases
 * (the project's `oauth_providers`, whose defaults these are). Auth0's own database (`auth0`) is
 * the user's login ids and password, not a connection; any other provider is left out and listed.
 */
const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  'google-oauth2': 'google',
  facebook: 'facebook',
  github: 'github',
  apple: 'apple',
};

/**
 * A user of Auth0's user export (ndjson) or bulk-import JSON: profile members, `blocked`, social
 * `identities` as OAuth connections (google-oauth2, facebook, github, apple),
 * `password_hash` (bcrypt) and `custom_password_hash` (argon2, bcrypt, pbkdf2, salted SHA-256,
 * SHA-512 and MD5), `mfa_factors` (TOTP, phone, email) and `user_metadata` as custom attributes.
 * The bcrypt hash of a user of the export job comes from the hash file Auth0 support delivers
 * (`hashes`, joined by `user_id`), or from a line of that file read as a user (`passwordHash`).
 * Auth0's own ids, other connections, `app_metadata` and login statistics have no place here.
 */
export function fromAuth0(user: Readonly<Record<string, unknown>>, hashes?: Auth0Hashes): ForeignRecord {
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
      const connection = oauthConnection(identity);
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
function oauthConnection(identity: unknown): Record<string, unknown> | 'database' | undefined {
  if (!isObject(identity) || typeof identity.provider !== 'string') return undefined;
  if (identity.provider === 'auth0') return 'database';
  const alias = PROVIDER_ALIASES[identity.provider];
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
