import type { LoginIdKey } from '../config.js';
import { copyRows } from '../db/copy-rows.js';
import type { CopyValue } from '../db/copy-text.js';
import type { PoolClient } from '../db/pool.js';
import { scratchTableSql } from '../db/transaction.js';
import { WRITTEN_COLUMNS } from '../db/user-related-rows.js';
import { ATTRIBUTE_OF_KEY } from '../identity/login-id-attributes.js';
import { oauthKey } from './identity-members.js';
import type { BatchPlan, BatchState } from './import-batch.js';
import { newRowId, type OAuthState, type UserState } from './user-state.js';

type Row = CopyValue[];

/** The rows a batch plan adds and the rows it removes, table by table. */
interface BatchRows {
  /** New users, each with its position among the batch's changed users (its creation order). */
  readonly created: { readonly n: number; readonly row: Row }[];
  /** Users stored before, changed. */
  readonly updated: Row[];
  readonly identities: Row[];
  readonly claims: Row[];
  readonly authenticators: Row[];
  readonly roleLinks: Row[];
  readonly groupLinks: Row[];
  readonly deletedIdentities: string[];
  readonly deletedAuthenticators: string[];
  readonly claimsReset: string[];
  readonly rolesReset: string[];
  readonly groupsReset: string[];
}

const USER_COLUMNS = [
  'id',
  'is_disabled',
  'standard_attributes',
  'custom_attributes',
  'account_valid_from',
  'account_valid_until',
];

/** The changed users of a batch: loaded with COPY, then updated from here. */
const IMPORT_USERS = scratchTableSql(
  'import_users',
  `id uuid NOT NULL, is_disabled boolean NOT NULL,
   standard_attributes jsonb NOT NULL, custom_attributes jsonb NOT NULL,
   account_valid_from timestamptz, account_valid_until timestamptz`,
);

/**
 * Stores a batch plan in the client's transaction with one bulk statement per table and kind of
 * change: deletes first (a login id may move between users within a batch), then the users (COPY
 * of the new ones; COPY of the changed ones into a temporary table, then `UPDATE ... FROM`), then
 * COPY of the rows that hang off them. The users and identities it writes are the project's.
 */
export async function writeBatchPlan(
  client: PoolClient,
  project: string,
  plan: BatchPlan,
  state: BatchState,
): Promise<void> {
  const rows = batchRows(plan, state);
  const deletions = [
    ['DELETE FROM identities WHERE id = ANY($1::uuid[])', rows.deletedIdentities],
    ['DELETE FROM verified_claims WHERE user_id = ANY($1::uuid[])', rows.claimsReset],
    ['DELETE FROM authenticators WHERE id = ANY($1::uuid[])', rows.deletedAuthenticators],
    ['DELETE FROM user_roles WHERE user_id = ANY($1::uuid[])', rows.rolesReset],
    ['DELETE FROM user_groups WHERE user_id = ANY($1::uuid[])', rows.groupsReset],
  ] as const;
  for (const [statement, ids] of deletions) if (ids.length) await client.query(statement, [ids]);

  if (rows.updated.length > 0) {
    await client.query(IMPORT_USERS);
    await copyRows(client, 'import_users', USER_COLUMNS, rows.updated);
    await client.query(
      `UPDATE users u SET standard_attributes = r.standard_attributes, custom_attributes = r.custom_attributes,
              is_disabled = r.is_disabled, account_valid_from = r.account_valid_from,
              account_valid_until = r.account_valid_until, updated_at = now()
         FROM import_users r WHERE u.id = r.id AND u.project_id = $1`,
      [project],
    );
  }
  if (rows.created.length > 0) {
    // One reading of the database's clock per batch, a microsecond apart per user: the users of a
    // batch keep their request order in (created_at, id), whatever order the rows are made in.
    const { rows: clock } = await client.query<{ at: string }>(
      `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS at`,
    );
    const at = Number(clock[0]?.at);
    await copyRows(
      client,
      'users',
      ['project_id', 'created_at', 'updated_at', ...USER_COLUMNS],
      rows.created.map(({ n, row }) => {
        const time = microsecondTime(at + n);
        return [project, time, time, ...row];
      }),
    );
  }
  await copyRows(
    client,
    'identities',
    ['project_id', ...WRITTEN_COLUMNS.identities],
    rows.identities.map((row) => [project, ...row]),
  );
  await copyRows(client, 'verified_claims', WRITTEN_COLUMNS.verified_claims, rows.claims);
  await copyRows(client, 'authenticators', WRITTEN_COLUMNS.authenticators, rows.authenticators);
  await copyRows(client, 'user_roles', WRITTEN_COLUMNS.user_roles, rows.roleLinks);
  await copyRows(client, 'user_groups', WRITTEN_COLUMNS.user_groups, rows.groupLinks);
}

/** A timestamp of microseconds since the epoch (exact as a number until the year 2255), in UTC. */
export function microsecondTime(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** The difference between each changed user's state before and after, as table rows. */
function batchRows(plan: BatchPlan, state: BatchState): BatchRows {
  const rows: BatchRows = {
    created: [],
    updated: [],
    identities: [],
    claims: [],
    authenticators: [],
    roleLinks: [],
    groupLinks: [],
    deletedIdentities: [],
    deletedAuthenticators: [],
    claimsReset: [],
    rolesReset: [],
    groupsReset: [],
  };
  let n = 0;
  for (const { before, after } of plan.changed.values()) {
    const row = [after.id, after.disabled, after.standard, after.custom, after.validFrom, after.validUntil];
    if (before) rows.updated.push(row);
    else rows.created.push({ n, row });
    n++;
    for (const [key, login] of after.loginIds) {
      const old = before?.loginIds.get(key);
      if (old?.id === login.id && old.original === login.original) continue;
      if (old) rows.deletedIdentities.push(old.id);
      rows.identities.push(identityRow(after.id, key, login.id, login.value, login.original));
    }
    for (const [key, old] of before?.loginIds ?? [])
      if (!after.loginIds.has(key)) rows.deletedIdentities.push(old.id);
    for (const connection of after.oauth.values()) {
      if (before?.oauth.get(oauthKey(connection.alias, connection.subject))?.id === connection.id) continue;
      rows.identities.push(oauthRow(after.id, connection));
    }
    for (const [key, old] of before?.oauth ?? [])
      if (after.oauth.get(key)?.id !== old.id) rows.deletedIdentities.push(old.id);
    if (!before || !sameSet(before.verified, after.verified)) {
      if (before) rows.claimsReset.push(after.id);
      for (const claim of after.verified) {
        const [name, value] = claim.split('\u0000');
        rows.claims.push([newRowId(), after.id, name, value]);
      }
    }
    for (const [slot, type] of [
      ['mfaEmail', 'oob_otp_email'],
      ['mfaPhone', 'oob_otp_sms'],
    ] as const) {
      const old = before?.[slot];
      const now = after[slot];
      if (old?.id === now?.id) continue;
      if (old) rows.deletedAuthenticators.push(old.id);
      if (now) {
        const [email, phone] = slot === 'mfaEmail' ? [now.value, null] : [null, now.value];
        rows.authenticators.push([now.id, after.id, 'secondary', type, null, email, phone, null, null]);
      }
    }
    if (!before) rows.authenticators.push(...secretAuthenticators(after));
    if (!before || !sameSet(before.roles, after.roles)) {
      if (before) rows.rolesReset.push(after.id);
      for (const key of after.roles) rows.roleLinks.push([after.id, state.roleIds.get(key)]);
    }
    if (!before || !sameSet(before.groups, after.groups)) {
      if (before) rows.groupsReset.push(after.id);
      for (const key of after.groups) rows.groupLinks.push([after.id, state.groupIds.get(key)]);
    }
  }
  return rows;
}

function identityRow(userId: string, key: LoginIdKey, id: string, value: string, original: string): Row {
  const attribute = ATTRIBUTE_OF_KEY[key];
  return [
    id,
    userId,
    'login_id',
    key,
    key,
    value,
    original,
    attribute === 'email' ? value : null,
    attribute === 'phone_number' ? value : null,
    attribute === 'preferred_username' ? value : null,
    null,
    null,
    null,
    null,
    {},
  ];
}

function oauthRow(userId: string, o: OAuthState): Row {
  const { id, alias, type, subject, profile, claims, email, phone, username } = o;
  return [
    id,
    userId,
    'oauth',
    null,
    null,
    null,
    null,
    email,
    phone,
    username,
    alias,
    type,
    subject,
    profile,
    claims,
  ];
}

/** Password, MFA password and TOTP: stored only when the user is created (decisions 3.2). */
function secretAuthenticators(user: UserState): Row[] {
  const rows: Row[] = [];
  const { password, passwordExpireAfter, mfaPassword, totpSecrets } = user.secrets;
  if (password)
    rows.push([
      newRowId(),
      user.id,
      'primary',
      'password',
      password,
      null,
      null,
      null,
      passwordExpireAfter ?? null,
    ]);
  if (mfaPassword)
    rows.push([newRowId(), user.id, 'secondary', 'password', mfaPassword, null, null, null, null]);
  for (const secret of totpSecrets)
    rows.push([newRowId(), user.id, 'secondary', 'totp', null, null, null, secret, null]);
  return rows;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
