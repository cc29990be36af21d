import type { Queryable } from '../db/pool.js';
import { pageOf, type UserSearch, type UserSearchIndex } from './user-search.js';

// users(searchKeyword) on Postgres: `user_search_text` (sql/009_user_list.sql) under a trigram GIN
// index answers the keyword; the page is a keyset over (sort value, id), so a cursor stays put
// whatever is written meanwhile. LAST_LOGIN_AT sorts users who never logged in as the earliest.
const SORT_SQL = {
  CREATED_AT: 'u.created_at',
  LAST_LOGIN_AT: "coalesce(u.last_login_at, '-infinity'::timestamptz)",
} as const;

/** `LIKE` pattern of a keyword: its wildcards taken literally. */
function likePattern(keyword: string): string {
  return `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The WHERE clause of a search of the project's users, with its parameters appended to `values`. */
function filters(project: string, search: UserSearch, values: unknown[]): string {
  values.push(project);
  const where: string[] = [`u.project_id = $${values.length}`];
  if (search.keyword !== '') {
    values.push(likePattern(search.keyword));
    where.push(`user_search_text(u.standard_attributes, u.id) LIKE search_fold($${values.length})`);
  }
  if (search.roleKeys.length > 0) {
    values.push(search.roleKeys);
    where.push(`EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                         WHERE ur.user_id = u.id AND r.key = ANY($${values.length}::text[]))`);
  }
  if (search.groupKeys.length > 0) {
    values.push(search.groupKeys);
    where.push(`EXISTS (SELECT 1 FROM user_groups ug JOIN groups g ON g.id = ug.group_id
                         WHERE ug.user_id = u.id AND g.key = ANY($${values.length}::text[]))`);
  }
  return where.join(' AND ');
}

export function postgresUserSearch(db: Queryable, project: string): UserSearchIndex {
  return {
    async page(search) {
      const values: unknown[] = [];
      const where = [filters(project, search, values)];
      const sort = SORT_SQL[search.sortBy];
      const direction = search.direction;
      let offset = '';
      const { start } = search;
      if (start.kind === 'after') {
        values.push(start.sortMicros, start.id);
        const at = `CASE WHEN $${values.length - 1}::bigint IS NULL THEN '-infinity'::timestamptz
                         ELSE 'epoch'::timestamptz + $${values.length - 1}::bigint * interval '1 microsecond' END`;
        where.push(`(${sort}, u.id) ${direction === 'ASC' ? '>' : '<'} (${at}, $${values.length}::uuid)`);
      } else if (start.kind === 'offset') {
        offset = `OFFSET ${start.offset}`;
      }
      values.push(search.first + 1);
      const { rows } = await db.query<{ id: string; sort_micros: string | null }>(
        `SELECT u.id, CASE WHEN ${sort} = '-infinity' THEN NULL
                           ELSE (extract(epoch FROM ${sort}) * 1000000)::bigint END AS sort_micros
           FROM users u
          WHERE ${where.join(' AND ')}
          ORDER BY ${sort} ${direction}, u.id ${direction}
          LIMIT $${values.length} ${offset}`,
        values,
      );
      return pageOf(rows, search.first, (r) => ({ id: r.id, sortMicros: r.sort_micros }));
    },

    async count(search) {
      const values: unknown[] = [];
      const { rows } = await db.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM users u WHERE ${filters(project, search, values)}`,
        values,
      );
      return rows[0]?.count ?? 0;
    },
  };
}
