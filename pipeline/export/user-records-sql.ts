import { joinRelated, RELATED } from '../db/user-related-rows.js';

// The export's records statement: every related table read once, in user order, and merged by
// Postgres into one stream of plain rows that the worker assembles into records
// (assemble-records.ts). COPY takes no parameters: the filters' values reach it as settings of
// the export's transaction (prepareSnapshot), and only the filters that are set become conditions.

/** Which conditions on the users an export (or one part of a split export) sets. */
export interface UserConditions {
  readonly createdAfter?: boolean;
  readonly updatedSince?: boolean;
  readonly disabled?: boolean;
  /** A part's range of users in the keyset (created_at, id): after one key, through another. */
  readonly after?: boolean;
  readonly through?: boolean;
  /** Only the users of a list (the change feed's records). */
  readonly users?: boolean;
}

/** A setting of the export's transaction (prepareSnapshot sets every one the conditions read). */
const setting = (name: string) => `current_setting('export.${name}')`;

/**
 * The users an export keeps, as a condition on `users u`: the project's, and only the conditions that are set, so
 * that a part's range bounds the scan of the creation-order index (an `x IS NULL OR` would make
 * every part read every user).
 */
export function userConditionSql(set: UserConditions): string {
  const conditions = [
    // Every export reads one project's users: the first column of the creation-order index. Users
    // of a list are found by their keys, and each one's project checked (the planner, not knowing
    // the setting's value, would rather scan the project's part of that index).
    set.users ? `(u.project_id = ${setting('project')}) IS TRUE` : `u.project_id = ${setting('project')}`,
    set.createdAfter && `u.created_at > ${setting('created_after')}::timestamptz`,
    set.updatedSince && `u.updated_at >= ${setting('updated_since')}::timestamptz`,
    set.disabled && `u.is_disabled = ${setting('disabled')}::boolean`,
    set.after && `(u.created_at, u.id) > (${setting('after_at')}::timestamptz, ${setting('after_id')}::uuid)`,
    set.through &&
      `(u.created_at, u.id) <= (${setting('through_at')}::timestamptz, ${setting('through_id')}::uuid)`,
    set.users && `u.id = ANY (string_to_array(${setting('users')}, ',')::uuid[])`,
  ].filter((condition) => typeof condition === 'string');
  return conditions.join(' AND ');
}

/**
 * The kinds of row the statement writes, by the number in a row's first field. A user's own row
 * comes first, then the rows of its related tables, each kind in the order the record lists them.
 */
export const ROW_KINDS = ['user', 'identity', 'role', 'group', 'authenticator', 'verified_claim'] as const;
export type RowKind = (typeof ROW_KINDS)[number];

/** The value columns a row of each kind carries after its kind, in order (all text). */
export const ROW_COLUMNS = {
  user: [
    'id',
    'is_disabled',
    'standard_attributes',
    'custom_attributes',
    'created_at',
    'updated_at',
    'last_login_at',
    'account_valid_from',
    'account_valid_until',
  ],
  identity: [
    'type',
    'login_id_key',
    'original_login_id',
    'login_id_type',
    'login_id',
    'email',
    'phone_number',
    'preferred_username',
    'provider_alias',
    'provider_type',
    'provider_subject_id',
    'profile',
    'claims',
  ],
  role: ['key'],
  group: ['key'],
  authenticator: ['kind', 'type', 'password_hash', 'email', 'phone', 'totp_secret', 'expire_after'],
  verified_claim: ['name', 'value'],
} as const satisfies Record<RowKind, readonly string[]>;

const WIDTH = Math.max(...Object.values(ROW_COLUMNS).map((columns) => columns.length));

/**
 * A timestamp as Postgres writes it in the export's transaction, in UTC and ISO style
 * (TIME_TEXT_SETTINGS); the worker makes it RFC 3339 (rfc3339Time). `to_char` would cost the
 * backend more than the plain text for every user.
 */
const utcTime = (column: string) => `${column}::text`;

/** How the rows of one kind are read: the values, the join to `users u`, the order within a user. */
interface RowSource {
  readonly values: readonly string[];
  readonly join?: string;
  readonly where?: string;
  /** Sorts a user's rows of this kind: a time, then an id, or a text. */
  readonly within?: { readonly at: string; readonly id: string } | { readonly text: string };
}

/** The settings of a transaction that reads the records statement: how its times are written. */
export const TIME_TEXT_SETTINGS = `set_config('TimeZone', 'UTC', true), set_config('DateStyle', 'ISO', true)`;

/** What the records carry besides the spec's members, and which users. */
export interface RecordsStatementOptions {
  readonly conditions: UserConditions;
  /** `created_at`, `updated_at` and `last_login_at` (TIME_POINTERS). */
  readonly times: boolean;
  /** Password hashes are read (include_password_hashes); otherwise they never leave Postgres. */
  readonly passwordHashes: boolean;
  /** The members the file reads (a CSV's fields); without it, every member. */
  readonly members?: ReadonlySet<string> | undefined;
}

/**
 * The kinds of related row each member of a record is built from (assembleRecord): a file that
 * reads none of the members of a kind leaves that kind's rows in Postgres.
 */
const MEMBER_ROWS: Readonly<Record<string, readonly RowKind[]>> = {
  email_verified: ['verified_claim'],
  phone_number_verified: ['verified_claim'],
  roles: ['role'],
  groups: ['group'],
  password: ['authenticator'],
  identities: ['identity'],
  mfa: ['authenticator'],
};

/** The kinds of row the records of a file that reads `members` are built from (every kind without it). */
function rowKindsOf(members: ReadonlySet<string> | undefined): ReadonlySet<RowKind> {
  if (members === undefined) return new Set(ROW_KINDS);
  return new Set<RowKind>(['user', ...[...members].flatMap((name) => MEMBER_ROWS[name] ?? [])]);
}

function rowSources({ times, passwordHashes }: RecordsStatementOptions): Record<RowKind, RowSource> {
  return {
    user: {
      values: [
        'u.id::text',
        'u.is_disabled::text',
        'u.standard_attributes::text',
        'u.custom_attributes::text',
        times ? utcTime('u.created_at') : 'NULL',
        times ? utcTime('u.updated_at') : 'NULL',
        times ? utcTime('u.last_login_at') : 'NULL',
        utcTime('u.account_valid_from'),
        utcTime('u.account_valid_until'),
      ],
    },
    identity: {
      values: [
        'i.type',
        'i.login_id_key',
        'i.original_login_id',
        'i.login_id_type',
        'i.login_id',
        'i.email',
        'i.phone_number',
        'i.preferred_username',
        'i.provider_alias',
        'i.provider_type',
        'i.provider_subject_id',
        'i.profile::text',
        'i.claims::text',
      ],
      join: joinRelated(RELATED.identities),
      within: { at: 'i.created_at', id: 'i.id' },
    },
    role: {
      values: ['r.key'],
      join: joinRelated(RELATED.roles),
      within: { text: 'r.key' },
    },
    group: {
      values: ['g.key'],
      join: joinRelated(RELATED.groups),
      within: { text: 'g.key' },
    },
    authenticator: {
      values: [
        'a.kind',
        'a.type',
        passwordHashes ? 'a.password_hash' : 'NULL',
        'a.email',
        'a.phone',
        'a.totp_secret',
        passwordHashes ? utcTime('a.expire_after') : 'NULL',
      ],
      join: joinRelated(RELATED.authenticators),
      // The primary password is part of the record only with its hash.
      where: passwordHashes ? "(a.kind = 'secondary' OR a.type = 'password')" : "a.kind = 'secondary'",
      within: { at: 'a.created_at', id: 'a.id' },
    },
    verified_claim: {
      values: ['v.name', 'v.value'],
      join: joinRelated(RELATED.verifiedClaims),
    },
  };
}

/** The order of the statement's rows, and of each branch's. */
const RECORDS_ORDER = 'user_at, user_id, kind, row_at, row_id, row_text';

/**
 * One of a branch's ordering columns (kind, row_at, row_id, row_text), written so that Postgres
 * cannot fold it to a constant (`u.id` is never null). The planner drops a constant from a branch's
 * order, and a merge then keeps only the users' order: Postgres would sort the merged rows again by
 * kind and within, a large part of the statement's time.
 */
const orderColumn = (value: string) => `CASE WHEN u.id IS NOT NULL THEN ${value} END`;

function branchSql(kind: number, source: RowSource, users: string): string {
  const within = source.within;
  const at = within && 'at' in within ? within.at : 'NULL';
  const id = within && 'id' in within ? within.id : 'NULL';
  const text = within && 'text' in within ? within.text : 'NULL';
  const values = Array.from({ length: WIDTH }, (_, n) => `${source.values[n] ?? 'NULL'}::text AS v${n + 1}`);
  const conditions = [users, source.where].filter((condition) => condition !== undefined);
  return `(SELECT u.created_at AS user_at, u.id AS user_id, ${orderColumn(String(kind))} AS kind,
          ${orderColumn(`${at}::timestamptz`)} AS row_at, ${orderColumn(`${id}::uuid`)} AS row_id,
          ${orderColumn(`${text}::text`)} AS row_text, ${values.join(', ')}
     FROM users u ${source.join ?? ''}
    WHERE ${conditions.join(' AND ')}
    ORDER BY ${RECORDS_ORDER})`;
}

/**
 * Every exported user as plain rows (ROW_KINDS, ROW_COLUMNS): the user's row, then its
 * identities, roles, groups, authenticators and verified claims (the kinds the file's members are
 * built from), users in creation order (the keyset (created_at, id) of index users_created_at_id).
 * Each branch is ordered by itself in the statement's whole order, so Postgres merges them as they
 * stream (Merge Append over index scans) rather than sorting the rows before the first one leaves;
 * prepareSnapshot keeps hash joins out of the plan for the same reason. Building the JSON is left
 * to the worker, where it costs a fraction of what Postgres's JSON functions cost.
 */
export function userRecordsSql(options: RecordsStatementOptions): string {
  const sources = rowSources(options);
  const users = userConditionSql(options.conditions);
  const kinds = rowKindsOf(options.members);
  const branches = ROW_KINDS.flatMap((kind, n) =>
    kinds.has(kind) ? [branchSql(n, sources[kind], users)] : [],
  );
  const values = Array.from({ length: WIDTH }, (_, n) => `x.v${n + 1}`);
  return `
SELECT x.kind, ${values.join(', ')}
  FROM (${branches.join('\n   UNION ALL ')}) x
 ORDER BY ${RECORDS_ORDER}`;
}
