import type { SearchDocument } from '../db/search-documents.js';

/** The smallest Int64: "never logged in" sorts before every login. */
export const NEVER = '-9223372036854775808';

/** A row of `users_search` (sql/clickhouse/users_search.sql), as JSONEachRow inserts it. */
export interface SearchRow {
  project_id: string;
  user_id: string;
  version: string;
  deleted: 0 | 1;
  search_text: string;
  created_us: string;
  last_login_us: string;
  roles: readonly string[];
  groups: readonly string[];
}

const SEARCHED = ['email', 'preferred_username', 'phone_number', 'name', 'given_name', 'family_name'];

/**
 * What a keyword may match partially, as Postgres's `user_search_text` makes it: the searched
 * attributes and the id, apart by a unit separator, lowercased (Unicode).
 */
export function searchText(attributes: Readonly<Record<string, unknown>>, userId: string): string {
  const parts = SEARCHED.map((name) =>
    typeof attributes[name] === 'string' ? (attributes[name] as string) : '',
  );
  return [...parts, userId].join('\u001f').toLowerCase();
}

/** The index's row of a user's document. */
export function searchRow(projectId: string, doc: SearchDocument): SearchRow {
  return {
    project_id: projectId,
    user_id: doc.user_id,
    version: doc.version,
    deleted: doc.deleted ? 1 : 0,
    search_text: doc.standard_attributes ? searchText(doc.standard_attributes, doc.user_id) : '',
    created_us: doc.created_us ?? '0',
    last_login_us: doc.last_login_us ?? NEVER,
    roles: doc.roles,
    groups: doc.groups,
  };
}
