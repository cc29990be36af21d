import type { LoginIdKey } from '../config.js';
import type { Queryable } from '../db/pool.js';
import { keyedIds } from '../db/roles-groups.js';
import { RELATED, relatedJson } from '../db/user-related-rows.js';
import { KEY_OF_ATTRIBUTE } from '../identity/login-id-attributes.js';
import { oauthKey } from './identity-members.js';
import { type BatchState, type ImportOptions, ownerKey } from './import-batch.js';
import { claimKey, type OAuthState, type UserState } from './user-state.js';
import type { PreparedRecord } from './validate-record.js';

interface LoadedUser {
  id: string;
  standard_attributes: Record<string, unknown>;
  custom_attributes: Record<string, unknown>;
  is_disabled: boolean;
  account_valid_from: string | null;
  account_valid_until: string | null;
  login_ids: { id: string; key: LoginIdKey; value: string; original: string }[];
  oauth: OAuthState[];
  verified: { name: 'email' | 'phone_number'; value: string }[];
  oob: { id: string; type: 'oob_otp_email' | 'oob_otp_sms'; value: string }[];
  roles: string[];
  groups: string[];
}

/**
 * Loads what a batch refers to: the owners of every login id it mentions, the full state of the
 * users its identifiers match (locked for this transaction, and read after the lock), and the ids
 * of its role and group keys that exist.
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
  const aliases: string[] = [];
  const subjects: string[] = [];
  const subs: string[] = [];
  for (const { index, checked } of records) {
    if (!checked.ok) continue;
    // A replay asks whether the users its records inserted the first time still exist.
    if (options.replayed && !checked.valid.sub) subs.push(options.userIdOf(index));
    for (const connection of checked.valid.oauth ?? []) {
      aliases.push(connection.alias);
      subjects.push(connection.subject);
    }
    if (checked.valid.sub) subs.push(checked.valid.sub);
    for (const [key, login] of checked.valid.loginIds) {
      if (login) {
        keys.push(key);
        values.push(login.value);
      }
    }
    for (const r of checked.valid.record.roles ?? []) roles.add(r);
    for (const g of checked.valid.record.groups ?? []) groups.add(g);
  }
  const idKey = KEY_OF_ATTRIBUTE[options.identifier];
  const probe = () => probeIdentities(db, options.project.id, idKey, { keys, values }, { aliases, subjects });
  let probed = await probe();
  // Under READ COMMITTED a statement sees what was committed when it began. The users the batch
  // updates are locked first, and their identities and state read by later statements, so that a
  // batch never writes its changes against a state that another import replaced while it waited
  // for the locks. Locking a matched user may change whom an identifier names: lock until stable.
  // A dry run only reads the users: it locks none of them.
  const locked = new Set<string>();
  const lockable = () => (options.lockUsers ? [...probed.matched].filter((id) => !locked.has(id)) : []);
  for (let fresh = lockable(); fresh.length > 0; fresh = lockable()) {
    await db.query('SELECT id FROM users WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [fresh]);
    for (const id of fresh) locked.add(id);
    probed = await probe();
  }
  // A user id is one in the whole deployment (its primary key): a `sub` another project's user
  // holds is taken too.
  const taken = subs.length
    ? await db.query<{ id: string }>('SELECT id FROM users WHERE id = ANY($1::uuid[])', [subs])
    : { rows: [] };
  const users = new Map<string, UserState>();
  if (probed.matched.size > 0) {
    const loaded = await db.query<LoadedUser>(LOAD_USERS, [[...probed.matched]]);
    for (const row of loaded.rows) users.set(row.id, toUserState(row));
  }
  return {
    owners: probed.owners,
    users,
    takenIds: new Set(taken.rows.map((row) => row.id)),
    roleIds: await keyedIds(db, options.project.id, 'role', roles),
    groupIds: await keyedIds(db, options.project.id, 'group', groups),
  };
}

/** The owner of each login id and OAuth connection named, and the users the identifier matches. */
async function probeIdentities(
  db: Queryable,
  project: string,
  idKey: LoginIdKey,
  login: { keys: string[]; values: string[] },
  oauth: { aliases: string[]; subjects: string[] },
): Promise<{ owners: Map<string, string>; matched: Set<string> }> {
  const owners = new Map<string, string>();
  const matched = new Set<string>();
  if (oauth.aliases.length > 0) {
    for (const row of await probeOwners(db, project, OAUTH_OWNER, oauth.aliases, oauth.subjects))
      owners.set(oauthKey(row.a, row.b), row.user_id);
  }
  for (const row of await probeOwners(db, project, LOGIN_ID_OWNER, login.keys, login.values)) {
    owners.set(ownerKey(row.a as LoginIdKey, row.b), row.user_id);
    if (row.a === idKey) matched.add(row.user_id);
  }
  return { owners, matched };
}

const LOGIN_ID_OWNER = `i.type = 'login_id' AND i.login_id_key = m.a AND i.login_id = m.b`;
const OAUTH_OWNER = `i.type = 'oauth' AND i.provider_alias = m.a AND i.provider_subject_id = m.b`;

/**
 * The owner of each identity named by a pair of values (a, b), through one probe of a unique
 * index per pair (LIMIT 1 keeps the subquery from being merged into a join): during a large
 * import the table's statistics lag far behind it, and a planner that believes it small sorts the
 * whole table for every batch instead.
 */
async function probeOwners(
  db: Queryable,
  project: string,
  identity: string,
  a: readonly string[],
  b: readonly string[],
): Promise<{ a: string; b: string; user_id: string }[]> {
  const { rows } = await db.query<{ a: string; b: string; user_id: string }>(
    `SELECT m.a, m.b, i.user_id
       FROM unnest($1::text[], $2::text[]) AS m(a, b)
      CROSS JOIN LATERAL (SELECT i.user_id FROM identities i WHERE i.project_id = $3 AND ${identity} LIMIT 1) i`,
    [a, b, project],
  );
  return rows;
}

/** A time as Date.toISOString writes it (UTC, milliseconds): the form records' times are compared in. */
const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const LOAD_USERS = `
  SELECT u.id, u.standard_attributes, u.custom_attributes, u.is_disabled,
    ${isoTime('u.account_valid_from')} AS account_valid_from, ${isoTime('u.account_valid_until')} AS account_valid_until,
    ${relatedJson(
      RELATED.loginIds,
      `json_build_object('id', i.id, 'key', i.login_id_key, 'value', i.login_id, 'original', i.original_login_id)`,
    )} AS login_ids,
    ${relatedJson(
      RELATED.oauthConnections,
      `json_build_object('id', i.id, 'alias', i.provider_alias, 'type', i.provider_type,
                         'subject', i.provider_subject_id, 'claims', i.claims, 'profile', coalesce(i.profile, '{}'),
                         'email', i.email, 'phone', i.phone_number, 'username', i.preferred_username)`,
      { order: 'i.created_at, i.id' },
    )} AS oauth,
    ${relatedJson(RELATED.verifiedClaims, `json_build_object('name', v.name, 'value', v.value)`)} AS verified,
    ${relatedJson(
      RELATED.authenticators,
      `json_build_object('id', a.id, 'type', a.type, 'value', coalesce(a.email, a.phone))`,
      { where: `a.kind = 'secondary' AND a.type IN ('oob_otp_email', 'oob_otp_sms')` },
    )} AS oob,
    ${relatedJson(RELATED.roles, 'r.key')} AS roles,
    ${relatedJson(RELATED.groups, 'g.key')} AS groups
  FROM users u WHERE u.id = ANY($1::uuid[])`;

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
    oauth: new Map(row.oauth.map((o) => [oauthKey(o.alias, o.subject), o])),
    verified: new Set(row.verified.map((v) => claimKey(v.name, v.value))),
    mfaEmail: oob('oob_otp_email'),
    mfaPhone: oob('oob_otp_sms'),
    roles: new Set(row.roles),
    groups: new Set(row.groups),
    validFrom: row.account_valid_from,
    validUntil: row.account_valid_until,
    secrets: { totpSecrets: [] },
  };
}
