/** The marker that replaces a secret in the details of an import (DECISIONS.md, Tasks). */
export const REDACTED = 'REDACTED';

/**
 * The record as submitted, with `password.password_hash`, `mfa.password.password_hash` and
 * `mfa.totp.secret` replaced by the marker wherever they are present, valid or not.
 */
export function redactRecord(record: unknown): unknown {
  if (!isObject(record)) return record;
  const copy: Record<string, unknown> = { ...record };
  if (isObject(copy.password) && 'password_hash' in copy.password) {
    copy.password = { ...copy.password, password_hash: REDACTED };
  }
  if (isObject(copy.mfa)) {
    const mfa: Record<string, unknown> = { ...copy.mfa };
    if (isObject(mfa.password) && 'password_hash' in mfa.password)
      mfa.password = { ...mfa.password, password_hash: REDACTED };
    if (isObject(mfa.totp) && 'secret' in mfa.totp) mfa.totp = { ...mfa.totp, secret: REDACTED };
    copy.mfa = mfa;
  }
  return copy;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
