import type { LoginIdKey } from '../config.js';

/** The standard attributes that login ids carry: import record members and lookup attribute names. */
export type LoginIdAttribute = 'email' | 'preferred_username' | 'phone_number';

/** The login id key of each such attribute (decisions 2.4 members, decisions 4.5 `attributeName`), in spec order. */
export const KEY_OF_ATTRIBUTE: Readonly<Record<LoginIdAttribute, LoginIdKey>> = {
  email: 'email',
  preferred_username: 'username',
  phone_number: 'phone',
};

/** The standard attribute that mirrors each login id key. */
export const ATTRIBUTE_OF_KEY: Readonly<Record<LoginIdKey, LoginIdAttribute>> = {
  email: 'email',
  username: 'preferred_username',
  phone: 'phone_number',
};

/** The attribute/key pairs, in spec order. */
export const LOGIN_ID_ATTRIBUTES = Object.entries(KEY_OF_ATTRIBUTE) as [LoginIdAttribute, LoginIdKey][];
