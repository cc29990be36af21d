import { fullFormats } from 'ajv-formats/dist/formats.js';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { LoginIdKey } from '../config.js';
import { isStorableText } from '../storable-text.js';

/** The result of normalizing one login id value: the normalized form, or why it is not valid. */
export type Normalized =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly problem: string };

const EMAIL = fullFormats.email as RegExp;

/** Postgres can store neither NUL nor an unpaired surrogate, so no login id may hold one. */
const UNSTORABLE: Normalized = {
  ok: false,
  problem: 'must not contain NUL or unpaired surrogate characters',
};

/**
 * Email: trimmed, NFKC, case-folded unless the project keeps it case-sensitive; a bare address
 * without display name (docs/decisions.md, Import validation).
 */
export function normalizeEmail(raw: string, caseSensitive: boolean): Normalized {
  if (!isStorableText(raw)) return UNSTORABLE;
  const value = raw.trim().normalize('NFKC');
  if (!EMAIL.test(value)) return { ok: false, problem: 'invalid email address' };
  return { ok: true, value: caseSensitive ? value : value.toLowerCase() };
}

/** Username: trimmed, NFKC, case-folded unless case-sensitive; never empty. */
export function normalizeUsername(raw: string, caseSensitive: boolean): Normalized {
  if (!isStorableText(raw)) return UNSTORABLE;
  const value = raw.trim().normalize('NFKC');
  if (value === '') return { ok: false, problem: 'username must not be empty' };
  return { ok: true, value: caseSensitive ? value : value.toLowerCase() };
}

/** Phone: must already be a valid number in E.164 form (`+` and country code, no spaces). */
export function normalizePhone(raw: string): Normalized {
  if (!isStorableText(raw)) return UNSTORABLE;
  const parsed = parsePhoneNumberFromString(raw);
  if (!parsed?.isValid() || parsed.number !== raw) {
    return { ok: false, problem: 'phone number must be a valid number in E.164 format' };
  }
  return { ok: true, value: parsed.number };
}

/** Normalizes a value of the given login id key. */
export function normalizeLoginId(key: LoginIdKey, raw: string, caseSensitive: boolean): Normalized {
  switch (key) {
    case 'email':
      return normalizeEmail(raw, caseSensitive);
    case 'username':
      return normalizeUsername(raw, caseSensitive);
    case 'phone':
      return normalizePhone(raw);
  }
}
