/**
 * One record of an import (spec 2.4). Members that an update can delete (spec 3.2,
 * UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL) also accept null. The identifier member is made required
 * and non-null per identifier by `importRecordSchemaFor`.
 */
const nullableString = { type: ['string', 'null'] } as const;
const bcryptPassword = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'password_hash'],
  properties: {
    type: { const: 'bcrypt' },
    // $2a$, $2b$ or $2y$, cost 04-31, 22 characters of salt and 31 of hash in bcrypt's base64.
    password_hash: { type: 'string', pattern: '^\\$2[aby]\\$(0[4-9]|[12][0-9]|3[01])\\$[./A-Za-z0-9]{53}$' },
  },
} as const;

export const importRecordSchema = {
  $id: 'import-record',
  type: 'object',
  additionalProperties: false,
  properties: {
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
    roles: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    groups: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    disabled: { type: 'boolean' },
    password: bcryptPassword,
    mfa: {
      type: 'object',
      additionalProperties: false,
      properties: {
        email: nullableString,
        phone_number: nullableString,
        password: bcryptPassword,
        totp: {
          type: 'object',
          additionalProperties: false,
          required: ['secret'],
          properties: { secret: { type: 'string', minLength: 1 } },
        },
      },
    },
  },
} as const;
