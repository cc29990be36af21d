import { chContains, chInt, chString, chStrings } from './clickhouse-sql.js';
import { NEVER } from './search-rows.js';
import { LIVE_TABLE, type SearchStore, searchIndexUnavailable } from './search-store.js';
import { pageOf, type UserSearch, type UserSearchIndex } from './user-search.js';

const SORT_COLUMN = { CREATED_AT: 'created_us', LAST_LOGIN_AT: 'last_login_us' } as const;

/**
 * The WHERE clause of a search: the project's live users that match. FINAL collapses every
 * version of every user it reads, which is what costs at a million users; so when the search
 * filters, the users whose rows match in any version are found first without FINAL (a scan of
 * the search columns), and FINAL reads only their granules (the primary key starts with the user
 * id) and checks the newest version again.
 */
function filters(table: string, projectId: string, search: UserSearch): string[] {
  const project = `project_id = ${chString(projectId)}`;
  const matching: string[] = [];
  if (search.keyword !== '') matching.push(`search_text LIKE ${chContains(search.keyword.toLowerCase())}`);
  if (search.roleKeys.length > 0) matching.push(`hasAny(roles, ${chStrings(search.roleKeys)})`);
  if (search.groupKeys.length > 0) matching.push(`hasAny(groups, ${chStrings(search.groupKeys)})`);
  const where = [project, 'deleted = 0', ...matching];
  if (matching.length > 0) {
    where.push(`user_id IN (SELECT user_id FROM ${table} WHERE ${[project, ...matching].join(' AND ')})`);
  }
  return where;
}

/**
 * users(searchKeyword) on ClickHouse: the newest version of each user (FINAL; its WHERE applies
 * after the versions are collapsed, so an older version never matches), a keyset page over
 * (sort value, id) as on Postgres. A ClickHouse fault is `ServiceUnavailable`/`SearchIndexUnavailable`.
 */
export function clickhouseUserSearch(store: SearchStore, projectId: string): UserSearchIndex {
  const table = store.table(LIVE_TABLE);
  const rows = async <T>(query: string): Promise<T[]> => {
    try {
      return await (await store.client.query({ query, format: 'JSONEachRow' })).json<T>();
    } catch (err) {
      throw searchIndexUnavailable(err);
    }
  };
  return {
    async page(search) {
      const where = filters(table, projectId, search);
      const sort = SORT_COLUMN[search.sortBy];
      const { start } = search;
      let offset = 0;
      if (start.kind === 'after') {
        const at = chInt(start.sortMicros ?? NEVER);
        const op = search.direction === 'ASC' ? '>' : '<';
        where.push(`(${sort} ${op} ${at} OR (${sort} = ${at} AND user_id ${op} ${chString(start.id)}))`);
      } else if (start.kind === 'offset') {
        offset = start.offset;
      }
      const found = await rows<{ user_id: string; sort_us: string }>(
        `SELECT user_id, toString(${sort}) AS sort_us FROM ${table} FINAL
          WHERE ${where.join(' AND ')}
          ORDER BY ${sort} ${search.direction}, user_id ${search.direction}
          LIMIT ${chInt(search.first + 1)} OFFSET ${chInt(offset)}`,
      );
      return pageOf(found, search.first, (r) => ({
        id: r.user_id,
        sortMicros: r.sort_us === NEVER ? null : r.sort_us,
      }));
    },

    async count(search) {
      const [row] = await rows<{ n: string }>(
        `SELECT toString(count()) AS n FROM ${table} FINAL WHERE ${filters(table, projectId, search).join(' AND ')}`,
      );
      return Number(row?.n ?? 0);
    },
  };
}
