import type { Readable } from 'node:stream';
import type { PoolClient, Queryable } from './pool.js';
import { streamRows } from './row-stream.js';
import { RELATED, relatedArray } from './user-related-rows.js';

/**
 * What the search index holds of a user, read from Postgres. `version` is the start of the reading
 * statement (microseconds): its snapshot holds every change committed before then, and a change
 * committed after is read again, by a later statement with a larger version, when its own change
 * message arrives. So the largest version of a user is its newest state.
 */
export interface SearchDocument {
  readonly user_id: string;
  /** The user is gone: the index drops it. */
  readonly deleted: boolean;
  readonly standard_attributes: Readonly<Record<string, unknown>> | null;
  readonly created_us: string | null;
  readonly last_login_us: string | null;
  readonly roles: readonly string[];
  readonly groups: readonly string[];
  readonly version: string;
}

const DOCUMENT_COLUMNS = `
  u.standard_attributes,
  (extract(epoch FROM u.created_at) * 1000000)::bigint::text AS created_us,
  (extract(epoch FROM u.last_login_at) * 1000000)::bigint::text AS last_login_us,
  ${relatedArray(RELATED.roles, 'r.key', { order: 'r.key' })} AS roles,
  ${relatedArray(RELATED.groups, 'g.key', { order: 'g.key' })} AS groups,
  (extract(epoch FROM statement_timestamp()) * 1000000)::bigint::text AS version`;

/** The documents of these users, those deleted marked so. */
export async function searchDocuments(db: Queryable, userIds: readonly string[]): Promise<SearchDocument[]> {
  const { rows } = await db.query<SearchDocument>(
    `SELECT w.id AS user_id, u.id IS NULL AS deleted, ${DOCUMENT_COLUMNS}
       FROM (SELECT DISTINCT unnest($1::uuid[]) AS id) w LEFT JOIN users u ON u.id = w.id`,
    [userIds],
  );
  return rows;
}

/** Every user's document of the project, streamed (for a reindex). */
export function streamSearchDocuments(client: PoolClient, project: string): Readable {
  return streamRows(
    client,
    `SELECT u.id AS user_id, false AS deleted, ${DOCUMENT_COLUMNS} FROM users u WHERE u.project_id = $1`,
    [project],
    5000,
  );
}
