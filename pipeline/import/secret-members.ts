/** The marker that replaces a secret in the details of an import (docs/decisions.md, Tasks). */
export const REDACTED = 'REDACTED';

/** The members of a TOTP that carry its secret: the otpauth `uri` an export writes embeds it. */
const TOTP_SECRETS = ['secret', 'uri'] as const;

/**
 * Calls `replace` on each secret member of an import record and returns the copy it makes:
 * `password.password_hash`, `mfa.password.password_hash`, and the `secret` and `uri` of
 * `mfa.totp` and of each item of `mfa.totps` (the export's list), valid or not. A
 * `password`, `mfa.password` or `mfa.totp` that is not an object is a secret as a whole: it is
 * what was meant to hold one. Everything else is shared with the record, which is left untouched.
 */
export function mapSecretMembers(record: unknown, replace: (secret: unknown) => unknown): unknown {
  if (!isObject(record)) return record;
  const copy: Record<string, unknown> = { ...record };
  if ('password' in copy) copy.password = mapSecret(copy.password, ['password_hash'], replace);
  if (isObject(copy.mfa)) {
    const mfa: Record<string, unknown> = { ...copy.mfa };
    if ('password' in mfa) mfa.password = mapSecret(mfa.password, ['password_hash'], replace);
    if ('totp' in mfa) mfa.totp = mapSecret(mfa.totp, TOTP_SECRETS, replace);
    if (Array.isArray(mfa.totps)) mfa.totps = mfa.totps.map((totp) => mapSecret(totp, TOTP_SECRETS, replace));
    else if ('totps' in mfa) mfa.totps = mapSecret(mfa.totps, TOTP_SECRETS, replace);
    copy.mfa = mfa;
  }
  return copy;
}

function mapSecret(
  holder: unknown,
  members: readonly string[],
  replace: (secret: unknown) => unknown,
): unknown {
  if (!isObject(holder)) return holder === null ? null : replace(holder);
  const held = members.filter((member) => member in holder);
  if (held.length === 0) return holder;
  const copy: Record<string, unknown> = { ...holder };
  for (const member of held) copy[member] = replace(holder[member]);
  return copy;
}

/** The record as the details show it: every secret member replaced by the marker. */
export function redactRecord(record: unknown): unknown {
  return mapSecretMembers(record, () => REDACTED);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
