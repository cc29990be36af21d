/**
 * One record of an import (decisions 2.4). Members that an update can delete (decisions 3.2,
 * UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL) also accept null. The identifier member is made required
 * and non-null per identifier by `importRecordSchemaFor`. Every member an ndjson export writes is
 * a member here, so that an export can be imported as it is.
 */
const nullableString = { type: ['string', 'null'] } as const;
/** An RFC 3339 time with its offset (read as the instant it names, stored and answered in UTC). */
const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

/** The most roles or groups one record may give a user, and the most identities or TOTPs. */
export const RECORD_ARRAY_LIMITS = { roles: 1_000, identities: 100, totps: 10 } as const;

/** The password hash formats an import accepts (issue: migrations from other systems). */
export const passwordTypes = [
  'bcrypt',
  'argon2id',
  'argon2i',
  'scrypt',
  'firebase_scrypt',
  'pbkdf2_sha256',
  'pbkdf2_sha512',
  'sha256_salted',
  'sha512_salted',
  'md5_salted',
] as const;

/** A password hash in one of `passwordTypes`; its format is checked by the worker (password-formats.ts). */
const password = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'password_hash'],
  properties: {
    type: { enum: passwordTypes },
    password_hash: { type: 'string', minLength: 1 },
    // firebase_scrypt (base64) and the salted digests.
    salt: { type: 'string', minLength: 1 },
    salt_encoding: { enum: ['utf8', 'hex', 'base64'] },
    salt_position: { enum: ['prefix', 'suffix'] },
    /** The password must be changed after this time. */
    expire_after: time,
  },
} as const;

const totp = {
  type: 'object',
  additionalProperties: false,
  required: ['secret'],
  properties: {
    // RFC 4648 base32, as authenticator apps read it: the export pastes it into an otpauth URI.
    secret: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z2-7]+=*$' },
    // What an export writes beside the secret; the import makes its own from the project.
    uri: { type: 'string' },
  },
} as const;

/** An identity as the ndjson export writes it: a login id or an OAuth connection. */
const identity = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: ['login_id', 'oauth'] } },
  discriminator: { propertyName: 'type' },
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'login_id'],
      properties: {
        type: { const: 'login_id' },
        login_id: {
          type: 'object',
          additionalProperties: false,
          required: ['key', 'original_value'],
          properties: {
            key: { enum: ['email', 'username', 'phone'] },
            original_value: { type: 'string', minLength: 1 },
            // Derived from original_value by the project's normalization: read, not trusted.
            type: { enum: ['email', 'username', 'phone'] },
            value: { type: 'string' },
          },
        },
        // Derived from the login id: read, not trusted.
        claims: { type: 'object' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'oauth'],
      properties: {
        type: { const: 'oauth' },
        oauth: {
          type: 'object',
          additionalProperties: false,
          required: ['provider_alias', 'provider_type', 'provider_subject_id'],
          properties: {
            provider_alias: { type: 'string', minLength: 1 },
            provider_type: { type: 'string', minLength: 1 },
            provider_subject_id: { type: 'string', minLength: 1 },
            user_profile: { type: 'object' },
          },
        },
        claims: { type: 'object' },
      },
    },
  ],
} as const;

export const importRecordSchema = {
  $id: 'import-record',
  type: 'object',
  additionalProperties: false,
  properties: {
    // A user id as an export writes it: kept when the user is created (a UUID no user has).
    sub: { type: 'string' },
    preferred_username: nullableString,
    email: nullableString,
    phone_number: nullableString,
    email_verified: { type: 'boolean' },
    phone_number_verified: { type: 'boolean' },
    name: nullableString,
    given_name: nullableString,
    family_name: nullableString,
    middle_name: nullableString,
    nickname: nullableString,
    profile: nullableString,
    picture: nullableString,
    website: nullableString,
    gender: nullableString,
    birthdate: nullableString,
    zoneinfo: nullableString,
    locale: nullableString,
    address: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        formatted: { type: 'string' },
        street_address: { type: 'string' },
        locality: { type: 'string' },
        region: { type: 'string' },
        postal_code: { type: 'string' },
        country: { type: 'string' },
      },
    },
    custom_attributes: { type: 'object' },
    roles: {
      type: 'array',
      maxItems: RECORD_ARRAY_LIMITS.roles,
      items: { type: 'string', minLength: 1 },
      uniqueItems: true,
    },
    groups: {
      type: 'array',
      maxItems: RECORD_ARRAY_LIMITS.roles,
      items: { type: 'string', minLength: 1 },
      uniqueItems: true,
    },
    disabled: { type: 'boolean' },
    /** The period the account may be used in: present sets a bound, null removes it. */
    account_valid_from: nullableTime,
    account_valid_until: nullableTime,
    password,
    identities: { type: 'array', maxItems: RECORD_ARRAY_LIMITS.identities, items: identity },
    mfa: {
      type: 'object',
      additionalProperties: false,
      properties: {
        email: nullableString,
        phone_number: nullableString,
        // The export's lists: one address and one number per user here (an empty list removes it).
        emails: { type: 'array', maxItems: 1, items: { type: 'string' } },
        phone_numbers: { type: 'array', maxItems: 1, items: { type: 'string' } },
        password,
        totp,
        totps: { type: 'array', maxItems: RECORD_ARRAY_LIMITS.totps, items: totp },
      },
    },
    // Written by an export; the service keeps no biometrics or passkeys (a count above 0 warns).
    biometric_count: { type: 'integer', minimum: 0 },
    passkey_count: { type: 'integer', minimum: 0 },
  },
} as const;
