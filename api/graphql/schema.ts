import { GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { createKeyed, type KeyedKind } from '../../pipeline/db/roles-groups.js';
import type { GraphQLContext } from './context.js';
import { loginIdArguments, oauthArguments, standardAttributeArguments } from './lookup-arguments.js';
import { GroupType, listOf, nonNull, RoleType, UserType } from './user-type.js';

const requiredString = { type: new GraphQLNonNull(GraphQLString) };

const Query = new GraphQLObjectType<unknown, GraphQLContext>({
  name: 'Query',
  fields: {
    getUsersByStandardAttribute: {
      type: listOf(UserType),
      description:
        'Users whose email, preferred_username or phone_number (from a login id or an OAuth connection) is exactly the value.',
      args: { attributeName: requiredString, attributeValue: requiredString },
      resolve: (_root, args: { attributeName: string; attributeValue: string }, { lookups, project }) => {
        const { attribute, value } = standardAttributeArguments(
          project,
          args.attributeName,
          args.attributeValue,
        );
        return lookups.byStandardAttribute(attribute, value);
      },
    },
    getUserByLoginID: {
      type: UserType,
      description: 'The user with this login id (email, username or phone in E.164), or null.',
      args: { loginIDKey: requiredString, loginIDValue: requiredString },
      resolve: async (_root, args: { loginIDKey: string; loginIDValue: string }, { lookups, project }) => {
        const { key, value } = loginIdArguments(project, args.loginIDKey, args.loginIDValue);
        return (await lookups.byLoginId({ key, value })) ?? null;
      },
    },
    getUserByOAuth: {
      type: UserType,
      description: "The user connected through this provider alias with the provider's subject id, or null.",
      args: { oauthProviderAlias: requiredString, oauthProviderUserID: requiredString },
      resolve: async (
        _root,
        args: { oauthProviderAlias: string; oauthProviderUserID: string },
        { lookups, project },
      ) => {
        oauthArguments(project, args.oauthProviderAlias, args.oauthProviderUserID);
        const found = await lookups.byOAuth({
          providerAlias: args.oauthProviderAlias,
          subjectId: args.oauthProviderUserID,
        });
        return found ?? null;
      },
    },
  },
});

const createKeyedField = (kind: KeyedKind, type: typeof RoleType) => ({
  type: nonNull(type),
  args: { key: requiredString, name: { type: GraphQLString } },
  resolve: (_root: unknown, args: { key: string; name?: string | null }, { db }: GraphQLContext) =>
    createKeyed(db, kind, args.key, args.name ?? null),
});

const Mutation = new GraphQLObjectType<unknown, GraphQLContext>({
  name: 'Mutation',
  fields: {
    createRole: {
      ...createKeyedField('role', RoleType),
      description: 'Creates a role that imports can assign.',
    },
    createGroup: {
      ...createKeyedField('group', GroupType),
      description: 'Creates a group that imports can assign.',
    },
  },
});

/** The administrative graph interface of spec 4.5. */
export const adminSchema = new GraphQLSchema({ query: Query, mutation: Mutation });
