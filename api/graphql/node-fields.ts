import { GraphQLID, GraphQLList } from 'graphql';
import { findUsersByIds } from '../../pipeline/db/lookups.js';
import type { Queryable } from '../../pipeline/db/pool.js';
import { keyedByIds } from '../../pipeline/db/roles-groups.js';
import { UUID } from '../../pipeline/search/user-search.js';
import type { GraphQLContext } from './context.js';
import { NodeInterface, nonNull } from './entity-types.js';

/**
 * Users, roles and groups by id, tagged with their type: ids are UUIDs of one space (the user id
 * is the one import details return), so an id names one node whichever table holds it. An id that
 * is not a UUID names nothing.
 */
async function nodesById(db: Queryable, project: string, ids: readonly string[]): Promise<(object | null)[]> {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => UUID.test(id)))];
  const [users, roles, groups] = await Promise.all([
    findUsersByIds(db, project, wanted),
    keyedByIds(db, project, 'role', wanted),
    keyedByIds(db, project, 'group', wanted),
  ]);
  const found = new Map<string, object>([
    ...users.map((u) => [u.id, { ...u, __typename: 'User' }] as const),
    ...roles.map((r) => [r.id, { ...r, __typename: 'Role' }] as const),
    ...groups.map((g) => [g.id, { ...g, __typename: 'Group' }] as const),
  ]);
  return ids.map((id) => found.get(id.toLowerCase()) ?? null);
}

export const nodeFields = {
  node: {
    type: NodeInterface,
    description: 'Fetches an object given its ID',
    args: { id: { type: nonNull(GraphQLID), description: 'The ID of an object' } },
    resolve: async (_root: unknown, { id }: { id: string }, { db, project }: GraphQLContext) =>
      (await nodesById(db, project.id, [id]))[0] ?? null,
  },
  nodes: {
    type: nonNull(new GraphQLList(NodeInterface)),
    description: 'Lookup nodes by a list of IDs.',
    args: {
      ids: { type: nonNull(new GraphQLList(nonNull(GraphQLID))), description: 'The list of node IDs.' },
    },
    resolve: (_root: unknown, { ids }: { ids: string[] }, { db, project }: GraphQLContext) =>
      nodesById(db, project.id, ids),
  },
};
