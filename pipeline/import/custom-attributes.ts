import { normalizeEmail, normalizePhone } from '../identity/normalize.js';

/** A custom attribute as the project declares it. */
export interface DeclaredAttribute {
  readonly type: string;
  readonly enum?: readonly string[];
}

/** Why a value does not fit its declared custom attribute type, or undefined when it does. */
export function checkCustomAttribute(declared: DeclaredAttribute, value: unknown): string | undefined {
  switch (declared.type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'integer':
      return Number.isInteger(value) ? undefined : 'must be an integer';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be a boolean';
    case 'enum':
      return typeof value === 'string' && (declared.enum ?? []).includes(value)
        ? undefined
        : `must be one of ${(declared.enum ?? []).join(', ')}`;
    case 'email':
      return typeof value === 'string' && normalizeEmail(value, true).ok
        ? undefined
        : 'must be an email address';
    case 'phone_number':
      return typeof value === 'string' && normalizePhone(value).ok
        ? undefined
        : 'must be a phone number in E.164 format';
    case 'url':
      return typeof value === 'string' && URL.canParse(value) ? undefined : 'must be a URL';
    case 'country_code':
      return typeof value === 'string' && /^[A-Z]{2}$/.test(value)
        ? undefined
        : 'must be an ISO 3166-1 alpha-2 code';
    default:
      return `has an unknown type ${declared.type}`;
  }
}
