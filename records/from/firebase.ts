import { storedPasswordHash } from '../../schemas/password-formats.js';
import type { FirebaseHashFlags, ForeignRecord } from './foreign-record.js';
import { mapMembers, oauthIdentity } from './foreign-record.js';

const MEMBERS: Record<string, string> = {
  email: 'email',
  emailVerified: 'email_verified',
  displayName: 'name',
  photoUrl: 'picture',
  phoneNumber: 'phone_number',
  disabled: 'disabled',
};
const HANDLED = new Set(['passwordHash', 'salt', 'customAttributes', 'mfaInfo', 'providerUserInfo']);

/**
 * A user of `firebase auth:export` JSON: profile members, `disabled`, the scrypt hash (with the
 * project's parameters given as flags, the hash carries them; without, the service's project
 * configuration must hold them), `customAttributes` (a JSON object in a string), phone second
 * factors, and sign-ins of providers with an alias as OAuth connections. Firebase's ids and times
 * are listed unless the run keeps them in custom attributes, and so are other providers.
 */
export function fromFirebase(
  user: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
  flags?: FirebaseHashFlags,
): ForeignRecord {
  const { record, unmapped } = mapMembers(user, MEMBERS, HANDLED);
  if (typeof user.passwordHash === 'string' && typeof user.salt === 'string') {
    const given = { type: 'firebase_scrypt', password_hash: user.passwordHash, salt: user.salt } as const;
    // With the flags, the hash as the service stores it, its parameters in it; a malformed one is
    // sent as given, and the service names the problem in the results.
    const stored = flags && storedPasswordHash(given, flags);
    record.password = stored?.ok ? { type: 'firebase_scrypt', password_hash: stored.stored } : given;
  } else if (user.passwordHash !== undefined) unmapped.push('passwordHash');
  if (typeof user.customAttributes === 'string' && user.customAttributes !== '') {
    try {
      record.custom_attributes = JSON.parse(user.customAttributes);
    } catch {
      unmapped.push('customAttributes');
    }
  }
  if (Array.isArray(user.mfaInfo)) {
    user.mfaInfo.forEach((factor: { phoneInfo?: unknown }, i) => {
      if (typeof factor?.phoneInfo === 'string' && !record.mfa)
        record.mfa = { phone_number: factor.phoneInfo };
      else unmapped.push(`mfaInfo/${i}`);
    });
  }
  if (Array.isArray(user.providerUserInfo)) {
    const oauth: Record<string, unknown>[] = [];
    user.providerUserInfo.forEach((provider: { providerId?: unknown; rawId?: unknown }, i) => {
      if (provider?.providerId === 'password' || provider?.providerId === 'phone') return;
      const alias = typeof provider?.providerId === 'string' ? aliases[provider.providerId] : undefined;
      if (alias && typeof provider.rawId === 'string' && provider.rawId !== '') {
        const { providerId: _id, rawId: _raw, ...profile } = provider;
        oauth.push(oauthIdentity(alias, provider.rawId, profile));
      } else unmapped.push(`providerUserInfo/${i}`);
    });
    if (oauth.length > 0) record.identities = oauth;
  }
  return { record, unmapped };
}

/**
 * The columns of `firebase auth:export --format=csv`, which writes no header
 * (https://firebase.google.com/docs/cli/auth#file_format).
 */
export const FIREBASE_CSV_COLUMNS = [
  'UID',
  'Email',
  'Email Verified',
  'Password Hash',
  'Password Salt',
  'Name',
  'Photo URL',
  'Google ID',
  'Google Email',
  'Google Display Name',
  'Google Photo URL',
  'Facebook ID',
  'Facebook Email',
  'Facebook Display Name',
  'Facebook Photo URL',
  'Twitter ID',
  'Twitter Email',
  'Twitter Display Name',
  'Twitter Photo URL',
  'GitHub ID',
  'GitHub Email',
  'GitHub Display Name',
  'GitHub Photo URL',
  'User Creation Time',
  'Last Sign-In Time',
  'Phone Number',
] as const;

/** The providers of Firebase's CSV, by the prefix of their columns. */
const CSV_PROVIDERS = {
  Google: 'google.com',
  Facebook: 'facebook.com',
  Twitter: 'twitter.com',
  GitHub: 'github.com',
};

/** A row of Firebase's CSV as the user its JSON would give (`localId`, `providerUserInfo`, ...). */
export function firebaseCsvUser(row: Readonly<Record<string, string>>): Record<string, unknown> {
  const cell = (column: string) => (row[column] === '' ? undefined : row[column]);
  const providerUserInfo = Object.entries(CSV_PROVIDERS).flatMap(([name, providerId]) =>
    cell(`${name} ID`)
      ? [
          {
            providerId,
            rawId: cell(`${name} ID`),
            email: cell(`${name} Email`),
            displayName: cell(`${name} Display Name`),
            photoUrl: cell(`${name} Photo URL`),
          },
        ]
      : [],
  );
  const verified = cell('Email Verified')?.toLowerCase();
  const user: Record<string, unknown> = {
    localId: cell('UID'),
    email: cell('Email'),
    emailVerified: verified === undefined ? undefined : verified === 'true',
    passwordHash: cell('Password Hash'),
    salt: cell('Password Salt'),
    displayName: cell('Name'),
    photoUrl: cell('Photo URL'),
    providerUserInfo: providerUserInfo.length > 0 ? providerUserInfo : undefined,
    createdAt: cell('User Creation Time'),
    lastSignedInAt: cell('Last Sign-In Time'),
    phoneNumber: cell('Phone Number'),
  };
  return Object.fromEntries(Object.entries(user).filter(([, v]) => v !== undefined));
}
