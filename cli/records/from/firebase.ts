import { storedPasswordHash } from '../../../pipeline/passwords/password-formats.js';
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
 * Firebase's sign-in providers (`providerUserInfo[].providerId`) as the service's OAuth provider
 * aliases; `password` and `phone` are the user's own login ids, and any other is left out and listed.
 */
const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  'google.com': 'google',
  'facebook.com': 'facebook',
  'github.com': 'github',
  'apple.com': 'apple',
};

/**
 * A user of `firebase auth:export` JSON: profile members, `disabled`, the scrypt hash (with the
 * project's parameters given as flags, the hash carries them; without, the service's project
 * configuration must hold them), `customAttributes` (a JSON object in a string), phone second
 * factors, and Google, Facebook, GitHub and Apple sign-ins as OAuth connections. Firebase's ids,
 * times and other providers have no place here.
 */
export function fromFirebase(
  user: Readonly<Record<string, unknown>>,
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
      const alias =
        typeof provider?.providerId === 'string' ? PROVIDER_ALIASES[provider.providerId] : undefined;
      if (alias && typeof provider.rawId === 'string' && provider.rawId !== '') {
        const { providerId: _id, rawId: _raw, ...profile } = provider;
        oauth.push(oauthIdentity(alias, provider.rawId, profile));
      } else unmapped.push(`providerUserInfo/${i}`);
    });
    if (oauth.length > 0) record.identities = oauth;
  }
  return { record, unmapped };
}
