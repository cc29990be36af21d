import { randomUUID } from 'node:crypto';
import { sqlState, UNIQUE_VIOLATION } from '../errors.js';
import type { KeyedRecord } from './lookup-records.js';
import type { Queryable } from './pool.js';

/** Roles and groups share their shape; only the table differs. */
export type KeyedKind = 'role' | 'group';

const TABLE: Record<KeyedKind, string> = { role: 'roles', group: 'groups' };

/** Keys as Authgear accepts them: a letter or `_`, then letters, digits, `:` or `_`; at most 40. */
export const KEY_PATTERN = /^[a-zA-Z_][a-zA-Z0-9:_]{0,39}$/;

/** What a role or a group is created with (Authgear's CreateRoleInput and CreateGroupInput). */
export interface KeyedInput {
  readonly key: string;
  readonly name?: string | null;
  readonly description?: string | null;
}

const KEYED_COLUMNS = 'id, key, name, description, created_at, updated_at';

/** A role or group created, or why not: a key not of KEY_PATTERN, or one another holds. */
export type KeyedCreation =
  | { readonly created: KeyedRecord }
  | { readonly refused: 'malformed key' | 'duplicate key' };

/** Creates a role or a group. */
export async function createKeyed(
  db: Queryable,
  project: string,
  kind: KeyedKind,
  { key, name = null, description = null }: KeyedInput,
): Promise<KeyedCreation> {
  if (!KEY_PATTERN.test(key)) return { refused: 'malformed key' };
  try {
    const { rows } = await db.query<KeyedRecord>(
      `INSERT INTO ${TABLE[kind]} (id, project_id, key, name, description) VALUES ($1, $2, $3, $4, $5)
       RETURNING ${KEYED_COLUMNS}`,
      [randomUUID(), project, key, name, description],
    );
    return { created: rows[0] as KeyedRecord };
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION) return { refused: 'duplicate key' };
    throw err;
  }
}

/** Key -> id of those of these role or group keys that exist. */
export async function keyedIds(
  db: Queryable,
  project: string,
  kind: KeyedKind,
  keys: ReadonlySet<string>,
): Promise<Map<string, string>> {
  if (keys.size === 0) return new Map();
  const { rows } = await db.query<{ id: string; key: string }>(
    `SELECT id, key FROM ${TABLE[kind]} WHERE project_id = $1 AND key = ANY($2)`,
    [project, [...keys]],
  );
  return new Map(rows.map((r) => [r.key, r.id]));
}

/** The roles or groups with these ids (those that exist, in no particular order). */
export async function keyedByIds(
  db: Queryable,
  project: string,
  kind: KeyedKind,
  ids: readonly string[],
): Promise<KeyedRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<KeyedRecord>(
    `SELECT ${KEYED_COLUMNS} FROM ${TABLE[kind]} WHERE project_id = $1 AND id = ANY($2::uuid[])`,
    [project, ids],
  );
  return rows;
}
