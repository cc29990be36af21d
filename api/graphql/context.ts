import type { ProjectConfig } from '../../pipeline/config.js';
import type { Queryable } from '../../pipeline/db/pool.js';
import type { UserSearchIndex } from '../../pipeline/search/user-search.js';
import type { UserLookups } from './lookup-batches.js';

/** What every resolver gets: the database, the batched lookups, the search index and the project's configuration. */
// A type alias, not an interface: graphql-http wants a context assignable to Record<PropertyKey, unknown>.
export type GraphQLContext = {
  readonly db: Queryable;
  readonly lookups: UserLookups;
  readonly project: ProjectConfig;
  /** The index behind `users(searchKeyword)`. */
  readonly search: UserSearchIndex;
};
