import type { LoginIdAttribute } from '../identity/login-id-attributes.js';
import type { Queryable } from './pool.js';
import { USER_RECORD_COLUMNS, type UserRecord } from './user-records.js';

/** A standard attribute that identities carry, and so can be looked up exactly. */
export type LookupAttribute = LoginIdAttribute;

// Each statement is named, so Postgres plans it once per connection. The identity probe is a
// single scan of one index of sql/002_identities.sql; the user's record is then read by key.
const BY_ATTRIBUTE: Record<LookupAttribute, { name: string; text: string }> = {
  email: byAttribute('email'),
  phone_number: byAttribute('phone_number'),
  preferred_username: byAttribute('preferred_username'),
};

function byAttribute(column: LookupAttribute): { name: string; text: string } {
  return {
    name: `users-by-${column}`,
    text: `SELECT ${USER_RECORD_COLUMNS} FROM users u
            WHERE u.id IN (SELECT i.user_id FROM identities i WHERE i.${column} = $1)
            ORDER BY u.created_at, u.id`,
  };
}

const BY_LOGIN_ID = {
  name: 'user-by-login-id',
  text: `SELECT ${USER_RECORD_COLUMNS} FROM identities i JOIN users u ON u.id = i.user_id
          WHERE i.type = 'login_id' AND i.login_id_key = $1 AND i.login_id = $2`,
};

const BY_OAUTH = {
  name: 'user-by-oauth',
  text: `SELECT ${USER_RECORD_COLUMNS} FROM identities i JOIN users u ON u.id = i.user_id
          WHERE i.type = 'oauth' AND i.provider_alias = $1 AND i.provider_subject_id = $2`,
};

/** Users whose login id or OAuth connection carries the normalized attribute value; creation order. */
export async function findUsersByStandardAttribute(
  db: Queryable,
  attribute: LookupAttribute,
  normalizedValue: string,
): Promise<UserRecord[]> {
  const { rows } = await db.query<UserRecord>({ ...BY_ATTRIBUTE[attribute], values: [normalizedValue] });
  return rows;
}

/** The user owning the login id with this key and normalized value, if any. */
export async function findUserByLoginId(
  db: Queryable,
  key: string,
  normalizedValue: string,
): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>({ ...BY_LOGIN_ID, values: [key, normalizedValue] });
  return rows[0];
}

/** The user connected through this provider alias with this provider subject id, if any. */
export async function findUserByOAuth(
  db: Queryable,
  providerAlias: string,
  subjectId: string,
): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>({ ...BY_OAUTH, values: [providerAlias, subjectId] });
  return rows[0];
}
