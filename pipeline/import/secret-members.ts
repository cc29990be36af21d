/** The marker that replaces a secret in the details of an import (docs/decisions.md, Tasks). */
export const REDACTED = 'REDACTED';

/**
 * The members of a password that say how to read its hash and carry none of it. Every other member
 * (`password_hash`, and any the schema does not know, such as a misspelled `passwordHash`) is a
 * secret: the shape is closed, so nothing unnamed is kept or shown in clear.
 */
const PASSWORD_PUBLIC = ['type', 'salt', 'salt_encoding', 'salt_position', 'expire_after'] as const;
/** A TOTP has no public member: its `secret`, the otpauth `uri` that embeds it, and any other. */
const TOTP_PUBLIC = [] as const;

/**
 * Calls `replace` on each secret member of an import record and returns the copy it makes: every
 * member but the public ones of `password`, `mfa.password`, `mfa.totp` and each item of
 * `mfa.totps` (the export's list), valid or not. A `password`, `mfa.password` or `mfa.totp` that
 * is not an object is a secret as a whole: it is what was meant to hold one. Everything else is
 * shared with the record, which is left untouched.
 */
export function mapSecretMembers(record: unknown, replace: (secret: unknown) => unknown): unknown {
  if (!isObject(record)) return record;
  const copy: Record<string, unknown> = { ...record };
  if ('password' in copy) copy.password = mapSecret(copy.password, PASSWORD_PUBLIC, replace);
  if (isObject(copy.mfa)) {
    const mfa: Record<string, unknown> = { ...copy.mfa };
    if ('password' in mfa) mfa.password = mapSecret(mfa.password, PASSWORD_PUBLIC, replace);
    if ('totp' in mfa) mfa.totp = mapSecret(mfa.totp, TOTP_PUBLIC, replace);
    if (Array.isArray(mfa.totps)) mfa.totps = mfa.totps.map((totp) => mapSecret(totp, TOTP_PUBLIC, replace));
    else if ('totps' in mfa) mfa.totps = mapSecret(mfa.totps, TOTP_PUBLIC, replace);
    copy.mfa = mfa;
  }
  return copy;
}

function mapSecret(
  holder: unknown,
  publicMembers: readonly string[],
  replace: (secret: unknown) => unknown,
): unknown {
  if (!isObject(holder)) return holder === null ? null : replace(holder);
  const held = Object.keys(holder).filter((member) => !publicMembers.includes(member));
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
