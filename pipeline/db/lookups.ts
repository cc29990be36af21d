import type { LoginIdAttribute } from '../identity/login-id-attributes.js';
import { USER_RECORD_COLUMNS, type UserRecord } from './lookup-records.js';
import type { Queryable } from './pool.js';

/** A standard attribute that identities carry, and so can be looked up exactly. */
export type LookupAttribute = LoginIdAttribute;

/** A login id as it is looked up: its key and its normalized value. */
export interface LoginIdLookup {
  readonly key: string;
  readonly value: string;
}

/** An OAuth connection as it is looked up: the provider alias and the provider's subject id. */
export interface OAuthLookup {
  readonly providerAlias: string;
  readonly subjectId: string;
}

// A statement answers one lookup or several at once (the facade sends the lookups that arrive in
// one turn of its event loop together): one round trip, one wake-up of the backend. Each wanted
// value is probed by a LATERAL subquery, always a nested loop over one scan of one index of
// sql/002_identities.sql (LIMIT 1 and DISTINCT keep the planner from merging the subquery into a
// join it could run another way). `w.n` is the wanted value's position, to hand the answers back.
//
// A lone value is written as one VALUES row, not as a one-element array: Postgres keeps a named
// statement's generic plan only when it costs no more than the plans made for the actual values,
// and it sizes an array parameter from the actual array, so an unnest() statement would be planned
// again on every execution. A batch pays that planning once for all its lookups.
interface Statements {
  readonly one: { readonly name: string; readonly text: string };
  readonly many: { readonly name: string; readonly text: string };
}

function statements(
  name: string,
  columns: readonly string[],
  select: (wanted: string, project: string) => string,
): Statements {
  const params = columns.map((_, p) => `$${p + 1}::text`);
  // The project is the last parameter: every probe is of the project's own rows.
  const project = `$${columns.length + 1}::text`;
  return {
    one: { name, text: select(`(VALUES (${params.join(', ')}, 1)) AS w(${columns.join(', ')}, n)`, project) },
    many: {
      name: `${name}-batch`,
      text: select(
        `unnest(${params.map((p) => `${p}[]`).join(', ')}) WITH ORDINALITY AS w(${columns.join(', ')}, n)`,
        project,
      ),
    },
  };
}

const BY_ATTRIBUTE: Record<LookupAttribute, Statements> = {
  email: byAttribute('email'),
  phone_number: byAttribute('phone_number'),
  preferred_username: byAttribute('preferred_username'),
};

function byAttribute(column: LookupAttribute): Statements {
  return statements(
    `users-by-${column}`,
    ['value'],
    (wanted, project) => `SELECT w.n::int AS n, ${USER_RECORD_COLUMNS}
                  FROM ${wanted}
                 CROSS JOIN LATERAL (SELECT DISTINCT i.user_id FROM identities i
                                      WHERE i.project_id = ${project} AND i.${column} = w.value) m
                  JOIN users u ON u.id = m.user_id
                 ORDER BY w.n, u.created_at, u.id`,
  );
}

/** The owner of one identity, found through a unique index: at most one user per wanted value. */
function byIdentity(name: string, columns: readonly string[], identity: string): Statements {
  return statements(
    name,
    columns,
    (wanted, project) => `SELECT w.n::int AS n, ${USER_RECORD_COLUMNS}
                  FROM ${wanted}
                 CROSS JOIN LATERAL (SELECT i.user_id FROM identities i
                                      WHERE i.project_id = ${project} AND ${identity} LIMIT 1) m
                  JOIN users u ON u.id = m.user_id`,
  );
}

const BY_LOGIN_ID = byIdentity(
  'users-by-login-id',
  ['key', 'value'],
  `i.type = 'login_id' AND i.login_id_key = w.key AND i.login_id = w.value`,
);

const BY_OAUTH = byIdentity(
  'users-by-oauth',
  ['alias', 'subject'],
  `i.type = 'oauth' AND i.provider_alias = w.alias AND i.provider_subject_id = w.subject`,
);

/** The statement and parameters for these wanted values, given as one list per column. */
function query(
  statement: Statements,
  project: string,
  columns: readonly (readonly string[])[],
): { name: string; text: string; values: unknown[] } {
  const lone = columns.every((c) => c.length === 1);
  return lone
    ? { ...statement.one, values: [...columns.map((c) => c[0]), project] }
    : { ...statement.many, values: [...columns, project] };
}

type NumberedRecord = UserRecord & { readonly n: number };

/**
 * For each normalized value, the users whose login id or OAuth connection carries it as this
 * attribute, in creation order.
 */
export async function findUsersByStandardAttribute(
  db: Queryable,
  project: string,
  attribute: LookupAttribute,
  normalizedValues: readonly string[],
): Promise<UserRecord[][]> {
  const { rows } = await db.query<NumberedRecord>(
    query(BY_ATTRIBUTE[attribute], project, [normalizedValues]),
  );
  const found = normalizedValues.map((): UserRecord[] => []);
  for (const { n, ...user } of rows) found[n - 1]?.push(user);
  return found;
}

/** For each login id, the user owning it, if any. */
export async function findUsersByLoginId(
  db: Queryable,
  project: string,
  loginIds: readonly LoginIdLookup[],
): Promise<(UserRecord | undefined)[]> {
  const { rows } = await db.query<NumberedRecord>(
    query(BY_LOGIN_ID, project, [loginIds.map((l) => l.key), loginIds.map((l) => l.value)]),
  );
  return byPosition(loginIds.length, rows);
}

/** For each OAuth connection, the user connected through it, if any. */
export async function findUsersByOAuth(
  db: Queryable,
  project: string,
  connections: readonly OAuthLookup[],
): Promise<(UserRecord | undefined)[]> {
  const { rows } = await db.query<NumberedRecord>(
    query(BY_OAUTH, project, [connections.map((c) => c.providerAlias), connections.map((c) => c.subjectId)]),
  );
  return byPosition(connections.length, rows);
}

/** The users with these ids, in the order asked (those that exist). */
export async function findUsersByIds(
  db: Queryable,
  project: string,
  ids: readonly string[],
): Promise<UserRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<NumberedRecord>({
    name: 'users-by-id',
    text: `SELECT w.n::int AS n, ${USER_RECORD_COLUMNS}
             FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, n) JOIN users u ON u.id = w.id AND u.project_id = $2
            ORDER BY w.n`,
    values: [ids, project],
  });
  return rows.map(({ n: _n, ...user }) => user);
}

// A login id or an OAuth connection belongs to one user at most (unique indexes), so each wanted
// value has at most one row.
function byPosition(count: number, rows: readonly NumberedRecord[]): (UserRecord | undefined)[] {
  const found = new Array<UserRecord | undefined>(count).fill(undefined);
  for (const { n, ...user } of rows) found[n - 1] = user;
  return found;
}
