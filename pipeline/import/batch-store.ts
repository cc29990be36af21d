import { randomUUID } from 'node:crypto';
import type { LoginIdKey } from '../config.js';
import type { Queryable } from '../db/pool.js';
import { ATTRIBUTE_OF_KEY, KEY_OF_ATTRIBUTE } from '../identity/login-id-attributes.js';
import {
  type BatchPlan,
  type BatchState,
  type ImportOptions,
  ownerKey,
  type PreparedRecord,
} from './plan-batch.js';
import { claimKey, type UserState } from './user-state.js';

interface LoadedUser {
  id: string;
  standard_attributes: Record<string, unknown>;
  custom_attributes: Record<string, unknown>;
  is_disabled: boolean;
  login_ids: { id: string; key: LoginIdKey; value: string; original: string }[];
  verified: { name: 'email' | 'phone_number'; value: string }[];
  oob: { id: string; type: 'oob_otp_email' | 'oob_otp_sms'; value: string }[];
  roles: string[];
  groups: string[];
}

/**
 * Loads, in three statements, what a batch refers to: the owners of every login id it mentions,
 * the full state of the users its identifiers match (locked for this transaction), and which of
 * its role and group keys exist.
 */
export async function loadBatchState(
  db: Queryable,
  records: readonly PreparedRecord[],
  options: ImportOptions,
): Promise<BatchState> {
  const keys: string[] = [];
  const values: string[] = [];
  const roles = new Set<string>();
  const groups = new Set<string>();
  for (const { checked } of records) {
    if (!checked.ok) continue;
    for (const [key, login] of checked.valid.loginIds) {
      if (login) {
        keys.push(key);
        values.push(login.value);
      }
    }
    for (const r of checked.valid.record.roles ?? []) roles.add(r);
    for (const g of checked.valid.record.groups ?? []) groups.add(g);
  }
  const owners = new Map<string, string>();
  const ownerRows = await db.query<{ login_id_key: LoginIdKey; login_id: string; user_id: string }>(
    `SELECT i.login_id_key, i.login_id, i.user_id FROM identities i
       JOIN unnest($1::text[], $2::text[]) AS m(key, value) ON i.login_id_key = m.key AND i.login_id = m.value
      WHERE i.type = 'login_id'`,
    [keys, values],
  );
  const matched = new Set<string>();
  const idKey = KEY_OF_ATTRIBUTE[options.identifier];
  for (const row of ownerRows.rows) {
    owners.set(ownerKey(row.login_id_key, row.login_id), row.user_id);
    if (row.login_id_key === idKey) matched.add(row.user_id);
  }
  const users = new Map<string, UserState>();
  if (matched.size > 0) {
    const loaded = await db.query<LoadedUser>(LOAD_USERS, [[...matched]]);
    for (const row of loaded.rows) users.set(row.id, toUserState(row));
  }
  const [roleRows, groupRows] = await Promise.all([
    roles.size
      ? db.query<{ key: string }>('SELECT key FROM roles WHERE key = ANY($1)', [[...roles]])
      : { rows: [] },
    groups.size
      ? db.query<{ key: string }>('SELECT key FROM groups WHERE key = ANY($1)', [[...groups]])
      : { rows: [] },
  ]);
  return {
    owners,
    users,
    roleKeys: new Set(roleRows.rows.map((r) => r.key)),
    groupKeys: new Set(groupRows.rows.map((r) => r.key)),
  };
}

const LOAD_USERS = `
  SELECT u.id, u.standard_attributes, u.custom_attributes, u.is_disabled,
    (SELECT coalesce(json_agg(json_build_object('id', i.id, 'key', i.login_id_key, 'value', i.login_id,
                                                'original', i.original_login_id)), '[]')
       FROM identities i WHERE i.user_id = u.id AND i.type = 'login_id') AS login_ids,
    (SELECT coalesce(json_agg(json_build_object('name', v.name, 'value', v.value)), '[]')
       FROM verified_claims v WHERE v.user_id = u.id) AS verified,
    (SELECT coalesce(json_agg(json_build_object('id', a.id, 'type', a.type, 'value', coalesce(a.email, a.phone))), '[]')
       FROM authenticators a
      WHERE a.user_id = u.id AND a.kind = 'secondary' AND a.type IN ('oob_otp_email', 'oob_otp_sms')) AS oob,
    (SELECT coalesce(json_agg(r.key), '[]') FROM user_roles ur JOIN roles r ON r.id = ur.role_id
      WHERE ur.user_id = u.id) AS roles,
    (SELECT coalesce(json_agg(g.key), '[]') FROM user_groups ug JOIN groups g ON g.id = ug.group_id
      WHERE ug.user_id = u.id) AS groups
  FROM users u WHERE u.id = ANY($1::uuid[])
  FOR UPDATE OF u`;

function toUserState(row: LoadedUser): UserState {
  const oob = (type: LoadedUser['oob'][number]['type']) => {
    const found = row.oob.find((a) => a.type === type);
    return found ? { id: found.id, value: found.value } : undefined;
  };
  return {
    id: row.id,
    standard: row.standard_attributes,
    custom: row.custom_attributes,
    disabled: row.is_disabled,
    loginIds: new Map(row.login_ids.map((l) => [l.key, { id: l.id, value: l.value, original: l.original }])),
    verified: new Set(row.verified.map((v) => claimKey(v.name, v.value))),
    mfaEmail: oob('oob_otp_email'),
    mfaPhone: oob('oob_otp_sms'),
    roles: new Set(row.roles),
    groups: new Set(row.groups),
    secrets: {},
  };
}

/**
 * Stores a batch plan with one multi-row statement per table and kind of change: deletes first
 * (a login id may move between users within a batch), then updates, then inserts.
 */
export async function writeBatchPlan(db: Queryable, plan: BatchPlan): Promise<void> {
  const inserted: UserState[] = [];
  const updated: UserState[] = [];
  const deletedIdentities: string[] = [];
  const identities: Record<string, unknown>[] = [];
  const claimsReset: string[] = [];
  const claims: Record<string, unknown>[] = [];
  const deletedAuthenticators: string[] = [];
  const authenticators: Record<string, unknown>[] = [];
  const rolesReset: string[] = [];
  const groupsReset: string[] = [];
  const roleLinks: { user_id: string; key: string }[] = [];
  const groupLinks: { user_id: string; key: string }[] = [];

  for (const { before, after } of plan.changed.values()) {
    (before ? updated : inserted).push(after);
    for (const [key, login] of after.loginIds) {
      const old = before?.loginIds.get(key);
      if (old?.id === login.id && old.original === login.original) continue;
      if (old) deletedIdentities.push(old.id);
      identities.push(identityRow(after.id, key, login.id, login.value, login.original));
    }
    for (const [key, old] of before?.loginIds ?? [])
      if (!after.loginIds.has(key)) deletedIdentities.push(old.id);
    if (!before || !sameSet(before.verified, after.verified)) {
      if (before) claimsReset.push(after.id);
      for (const claim of after.verified) {
        const [name, value] = claim.split('\u0000');
        claims.push({ id: randomUUID(), user_id: after.id, name, value });
      }
    }
    for (const [slot, type, column] of [
      ['mfaEmail', 'oob_otp_email', 'email'],
      ['mfaPhone', 'oob_otp_sms', 'phone'],
    ] as const) {
      const old = before?.[slot];
      const now = after[slot];
      if (old?.id === now?.id) continue;
      if (old) deletedAuthenticators.push(old.id);
      if (now)
        authenticators.push({ id: now.id, user_id: after.id, kind: 'secondary', type, [column]: now.value });
    }
    if (!before) authenticators.push(...secretAuthenticators(after));
    if (!before || !sameSet(before.roles, after.roles)) {
      if (before) rolesReset.push(after.id);
      for (const key of after.roles) roleLinks.push({ user_id: after.id, key });
    }
    if (!before || !sameSet(before.groups, after.groups)) {
      if (before) groupsReset.push(after.id);
      for (const key of after.groups) groupLinks.push({ user_id: after.id, key });
    }
  }

  const json = (rows: unknown[]) => JSON.stringify(rows);
  if (deletedIdentities.length)
    await db.query('DELETE FROM identities WHERE id = ANY($1::uuid[])', [deletedIdentities]);
  if (claimsReset.length)
    await db.query('DELETE FROM verified_claims WHERE user_id = ANY($1::uuid[])', [claimsReset]);
  if (deletedAuthenticators.length) {
    await db.query('DELETE FROM authenticators WHERE id = ANY($1::uuid[])', [deletedAuthenticators]);
  }
  if (rolesReset.length)
    await db.query('DELETE FROM user_roles WHERE user_id = ANY($1::uuid[])', [rolesReset]);
  if (groupsReset.length)
    await db.query('DELETE FROM user_groups WHERE user_id = ANY($1::uuid[])', [groupsReset]);
  if (updated.length) {
    await db.query(
      `UPDATE users u SET standard_attributes = r.standard_attributes, custom_attributes = r.custom_attributes,
              is_disabled = r.is_disabled, updated_at = now()
         FROM json_populate_recordset(NULL::users, $1::json) r WHERE u.id = r.id`,
      [json(updated.map(userRow))],
    );
  }
  if (inserted.length) {
    // clock_timestamp() per row: users of one batch keep their request order in (created_at, id).
    await db.query(
      `INSERT INTO users (id, created_at, updated_at, is_disabled, standard_attributes, custom_attributes)
       SELECT r.id, clock_timestamp(), clock_timestamp(), r.is_disabled, r.standard_attributes, r.custom_attributes
         FROM json_populate_recordset(NULL::users, $1::json) r`,
      [json(inserted.map(userRow))],
    );
  }
  if (identities.length) {
    await db.query(
      `INSERT INTO identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id,
                               email, phone_number, preferred_username)
       SELECT id, user_id, 'login_id', login_id_key, login_id_type, login_id, original_login_id,
              email, phone_number, preferred_username
         FROM json_populate_recordset(NULL::identities, $1::json)`,
      [json(identities)],
    );
  }
  if (claims.length) {
    await db.query(
      `INSERT INTO verified_claims (id, user_id, name, value)
       SELECT id, user_id, name, value FROM json_populate_recordset(NULL::verified_claims, $1::json)`,
      [json(claims)],
    );
  }
  if (authenticators.length) {
    await db.query(
      `INSERT INTO authenticators (id, user_id, kind, type, password_hash, email, phone, totp_secret)
       SELECT id, user_id, kind, type, password_hash, email, phone, totp_secret
         FROM json_populate_recordset(NULL::authenticators, $1::json)`,
      [json(authenticators)],
    );
  }
  for (const [links, table, link, column] of [
    [roleLinks, 'roles', 'user_roles', 'role_id'],
    [groupLinks, 'groups', 'user_groups', 'group_id'],
  ] as const) {
    if (!links.length) continue;
    await db.query(
      `INSERT INTO ${link} (user_id, ${column})
       SELECT l.user_id, t.id FROM json_to_recordset($1::json) AS l(user_id uuid, key text) JOIN ${table} t ON t.key = l.key`,
      [json(links)],
    );
  }
}

function userRow(user: UserState): Record<string, unknown> {
  return {
    id: user.id,
    is_disabled: user.disabled,
    standard_attributes: user.standard,
    custom_attributes: user.custom,
  };
}

function identityRow(
  userId: string,
  key: LoginIdKey,
  id: string,
  value: string,
  original: string,
): Record<string, unknown> {
  return {
    id,
    user_id: userId,
    login_id_key: key,
    login_id_type: key,
    login_id: value,
    original_login_id: original,
    [ATTRIBUTE_OF_KEY[key]]: value,
  };
}

function secretAuthenticators(user: UserState): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  const { password, mfaPassword, totpSecret } = user.secrets;
  if (password)
    rows.push({
      id: randomUUID(),
      user_id: user.id,
      kind: 'primary',
      type: 'password',
      password_hash: password,
    });
  if (mfaPassword) {
    rows.push({
      id: randomUUID(),
      user_id: user.id,
      kind: 'secondary',
      type: 'password',
      password_hash: mfaPassword,
    });
  }
  if (totpSecret)
    rows.push({
      id: randomUUID(),
      user_id: user.id,
      kind: 'secondary',
      type: 'totp',
      totp_secret: totpSecret,
    });
  return rows;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
