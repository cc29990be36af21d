import { GraphQLInt, GraphQLList, GraphQLString } from 'graphql';
import { findUsersByIds } from '../../pipeline/db/lookups.js';
import {
  MAX_CURSOR_OFFSET,
  MAX_PAGE_SIZE,
  MAX_SEARCH_KEYWORD_LENGTH,
  pageSize,
  pageStart,
  type SortDirection,
  searchKeyword,
  type UserSearch,
  type UserSortBy,
  userCursor,
} from '../../pipeline/search/user-search.js';
import { connection, connectionType } from './connections.js';
import type { GraphQLContext } from './context.js';
import { enumOf, nonNull } from './entity-types.js';
import { UserType } from './user-type.js';

interface UsersArguments {
  searchKeyword?: string | null;
  first?: number | null;
  after?: string | null;
  sortBy?: UserSortBy | null;
  sortDirection?: SortDirection | null;
  groupKeys?: string[] | null;
  roleKeys?: string[] | null;
}

/**
 * `users`: Authgear's user list (decisions 4.5 rule 3). Served by the search index, which may lag behind
 * writes; the page's users are then read from Postgres, so what a page shows is current. Newest
 * first unless asked otherwise.
 */
export const usersField = {
  type: connectionType(UserType),
  description:
    'Users matching a keyword partially (email, username, phone, names, id), from the search index. ' +
    `first: at most ${MAX_PAGE_SIZE}; searchKeyword: at most ${MAX_SEARCH_KEYWORD_LENGTH} characters; ` +
    `an offset cursor: at most ${MAX_CURSOR_OFFSET}.`,
  args: {
    searchKeyword: { type: GraphQLString },
    first: { type: GraphQLInt },
    after: { type: GraphQLString },
    sortBy: { type: enumOf('UserSortBy', ['CREATED_AT', 'LAST_LOGIN_AT']) },
    sortDirection: { type: enumOf('SortDirection', ['ASC', 'DESC']) },
    groupKeys: { type: new GraphQLList(nonNull(GraphQLString)) },
    roleKeys: { type: new GraphQLList(nonNull(GraphQLString)) },
  },
  resolve: async (_root: unknown, args: UsersArguments, { db, project, search }: GraphQLContext) => {
    const sortBy = args.sortBy ?? 'CREATED_AT';
    const request: UserSearch = {
      keyword: searchKeyword(args.searchKeyword),
      first: pageSize(args.first),
      start: pageStart(args.after, sortBy),
      sortBy,
      direction: args.sortDirection ?? 'DESC',
      roleKeys: args.roleKeys ?? [],
      groupKeys: args.groupKeys ?? [],
    };
    const { hits, hasNextPage } = await search.page(request);
    const users = new Map(
      (
        await findUsersByIds(
          db,
          project.id,
          hits.map((h) => h.id),
        )
      ).map((u) => [u.id, u]),
    );
    // A user the index still lists but that is gone from Postgres is left out of the page.
    const edges = hits.flatMap((hit) => {
      const node = users.get(hit.id);
      return node ? [{ cursor: userCursor(sortBy, hit), node }] : [];
    });
    return connection(edges, { hasNextPage, hasPreviousPage: request.start.kind !== 'first' }, () =>
      search.count(request),
    );
  },
};
