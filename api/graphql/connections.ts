import {
  GraphQLBoolean,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLString,
} from 'graphql';
import { afterOffset, invalidCursor, offsetCursor, pageSize } from '../../pipeline/search/user-search.js';

/** A Relay page as resolvers build it; `totalCount` may be computed only when asked for. */
export interface Connection<T> {
  readonly edges: readonly { readonly cursor: string; readonly node: T }[];
  readonly pageInfo: {
    readonly hasNextPage: boolean;
    readonly hasPreviousPage: boolean;
    readonly startCursor: string | null;
    readonly endCursor: string | null;
  };
  readonly totalCount: number | (() => Promise<number>);
}

export const PageInfoType = new GraphQLObjectType({
  name: 'PageInfo',
  description: 'Information about pagination in a connection.',
  fields: {
    endCursor: { type: GraphQLString },
    hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
    hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
  },
});

/** `<Name>Connection` and `<Name>Edge` of Authgear's schema for a node type. */
export function connectionType(node: GraphQLObjectType): GraphQLObjectType {
  const edge = new GraphQLObjectType({
    name: `${node.name}Edge`,
    description: 'An edge in a connection',
    fields: { cursor: { type: new GraphQLNonNull(GraphQLString) }, node: { type: node } },
  });
  return new GraphQLObjectType({
    name: `${node.name}Connection`,
    description: 'A connection to a list of items.',
    fields: {
      edges: { type: new GraphQLList(edge) as GraphQLOutputType },
      pageInfo: { type: new GraphQLNonNull(PageInfoType) },
      totalCount: {
        type: GraphQLInt,
        resolve: (c: Connection<unknown>) =>
          typeof c.totalCount === 'function' ? c.totalCount() : c.totalCount,
      },
    },
  });
}

/** The arguments of a connection of a short list (a user's roles, say). */
export const pageArguments = { first: { type: GraphQLInt }, after: { type: GraphQLString } };

/** A page of a list held in memory, with Authgear's offset cursors. */
export function listConnection<T>(
  items: readonly T[],
  args: { first?: number | null; after?: string | null },
): Connection<T> {
  let from = 0;
  if (args.after !== null && args.after !== undefined) {
    const offset = afterOffset(args.after);
    if (offset === undefined) throw invalidCursor('after is not a cursor of this list');
    from = offset;
  }
  const first = args.first === null || args.first === undefined ? items.length : pageSize(args.first);
  const edges = items.slice(from, from + first).map((node, i) => ({ cursor: offsetCursor(from + i), node }));
  return connection(
    edges,
    { hasNextPage: from + edges.length < items.length, hasPreviousPage: from > 0 },
    items.length,
  );
}

/** A connection of these edges, its start and end cursors those of its first and last edge. */
export function connection<T>(
  edges: Connection<T>['edges'],
  { hasNextPage, hasPreviousPage }: { hasNextPage: boolean; hasPreviousPage: boolean },
  totalCount: Connection<T>['totalCount'],
): Connection<T> {
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount,
  };
}
