import { serialize } from '@phc/format';
import { type ForeignRecord, isObject, jsonObject, mapMembers, oauthIdentity } from './foreign-record.js';

// A user of a Keycloak realm export (`kc.sh export`, the admin console's partial export): in the
// realm file's `users`, or in the separate `<realm>-users-<n>.json` files (`{"realm", "users"}`),
// each imported in turn. Credentials keep their `secretData` and `credentialData` as JSON text
// (https://www.keycloak.org/server/importExport, and the server's PasswordCredentialData and
// OTPCredentialData).

const MEMBERS: Record<string, string> = {
  username: 'preferred_username',
  email: 'email',
  emailVerified: 'email_verified',
  firstName: 'given_name',
  lastName: 'family_name',
};
const HANDLED = new Set([
  'enabled',
  'credentials',
  'federatedIdentities',
  'attributes',
  'realmRoles',
  'groups',
]);

/**
 * A Keycloak user as a record: profile members, `enabled: false` as disabled, the password
 * (pbkdf2-sha256 and pbkdf2-sha512 of any key length, argon2 with its parameters) as a PHC string
 * the service verifies, TOTP secrets (raw text unless `secretEncoding` says BASE32), Google,
 * federated identities of providers with an alias as OAuth connections, single-valued `attributes`
 * as custom attributes, realm roles (but the realm's built-in `default-roles-<realm>`) as roles and
 * group paths as groups. Client roles are listed, as are Keycloak's ids and times unless the run
 * keeps them in custom attributes.
 */
export function fromKeycloak(
  user: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
): ForeignRecord {
  const { record, unmapped } = mapMembers(user, MEMBERS, HANDLED);
  if (user.enabled === false) record.disabled = true;
  const totps: { secret: string }[] = [];
  if (Array.isArray(user.credentials)) {
    user.credentials.forEach((credential: unknown, i) => {
      const c = isObject(credential) ? credential : {};
      const secret = jsonObject(c.secretData);
      const data = jsonObject(c.credentialData);
      if (c.type === 'password' && !record.password) {
        const password = passwordOf(secret, data);
        if (password) record.password = password;
        else unmapped.push(`credentials/${i}`);
      } else if (c.type === 'otp' && typeof secret?.value === 'string' && data?.subType !== 'hotp') {
        totps.push({ secret: data?.secretEncoding === 'BASE32' ? secret.value : base32(secret.value) });
      } else unmapped.push(`credentials/${i}`);
    });
  }
  if (totps.length > 0) record.mfa = { totps };
  if (Array.isArray(user.federatedIdentities)) {
    const oauth: Record<string, unknown>[] = [];
    user.federatedIdentities.forEach((identity: unknown, i) => {
      const f = isObject(identity) ? identity : {};
      const alias = typeof f.identityProvider === 'string' ? aliases[f.identityProvider] : undefined;
      if (alias && typeof f.userId === 'string' && f.userId !== '')
        oauth.push(oauthIdentity(alias, f.userId));
      else unmapped.push(`federatedIdentities/${i}`);
    });
    if (oauth.length > 0) record.identities = oauth;
  }
  if (isObject(user.attributes)) {
    const custom: Record<string, unknown> = {};
    for (const [name, values] of Object.entries(user.attributes)) {
      if (Array.isArray(values) && values.length === 1) custom[name] = values[0];
      else unmapped.push(`attributes/${name}`);
    }
    if (Object.keys(custom).length > 0) record.custom_attributes = custom;
  }
  // The realm's built-in default role is no role of the user's own.
  const roles = names(user.realmRoles).filter((role) => !role.startsWith('default-roles-'));
  if (roles.length > 0) record.roles = roles;
  const groups = names(user.groups);
  if (groups.length > 0) record.groups = groups;
  return { record, unmapped };
}

/** The names of a list of the user's (its realm roles, its group paths). */
const names = (list: unknown): string[] =>
  Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string' && n !== '') : [];

/** A password credential as a record's password: PHC strings of pbkdf2 and argon2. */
function passwordOf(
  secret: Record<string, unknown> | undefined,
  data: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (typeof secret?.value !== 'string' || typeof secret.salt !== 'string') return undefined;
  const hash = Buffer.from(secret.value, 'base64');
  const salt = Buffer.from(secret.salt, 'base64');
  const algorithm = data?.algorithm;
  // Keycloak's `pbkdf2` is PBKDF2 with SHA-1: not a format the service verifies.
  if (algorithm === 'pbkdf2-sha256' || algorithm === 'pbkdf2-sha512') {
    const i = Number(data?.hashIterations);
    if (!Number.isInteger(i) || i < 1) return undefined;
    const type = algorithm === 'pbkdf2-sha256' ? 'pbkdf2_sha256' : 'pbkdf2_sha512';
    return { type, password_hash: serialize({ id: algorithm, params: { i }, salt, hash }) };
  }
  if (algorithm !== 'argon2') return undefined;
  const extra = isObject(data?.additionalParameters) ? data.additionalParameters : {};
  const one = (name: string) => (Array.isArray(extra[name]) ? String(extra[name][0]) : undefined);
  const type = { id: 'argon2id', i: 'argon2i' }[one('type') ?? 'id'];
  const m = Number(one('memory'));
  const t = Number(one('iterations'));
  const p = Number(one('parallelism'));
  if (!type || one('version') === '1.0' || ![m, t, p].every((n) => Number.isInteger(n) && n > 0))
    return undefined;
  return { type, password_hash: serialize({ id: type, version: 19, params: { m, t, p }, salt, hash }) };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (unpadded) of a text's UTF-8 bytes: Keycloak keeps a TOTP secret as raw text. */
function base32(text: string): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}
