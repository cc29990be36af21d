import {
  GraphQLInputObjectType,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import { createKeyed, KEY_PATTERN, type KeyedInput, type KeyedKind } from '../../pipeline/db/roles-groups.js';
import { ApiError } from '../../pipeline/errors.js';
import type { GraphQLContext } from './context.js';
import { GroupType, IdentityType, listOf, nonNull, RoleType } from './entity-types.js';
import { GRAPHQL_LIMITS } from './limits.js';
import { loginIdArguments, oauthArguments, standardAttributeArguments } from './lookup-arguments.js';
import { nodeFields } from './node-fields.js';
import { usersField } from './user-list.js';
import { UserType } from './user-type.js';

const requiredString = { type: new GraphQLNonNull(GraphQLString) };

const Query = new GraphQLObjectType<unknown, GraphQLContext>({
  name: 'Query',
  fields: {
    ...nodeFields,
    users: usersField,
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

/** Authgear's createRole / createGroup: `(input: {key, name, description})` -> `{role}` / `{group}`. */
function createKeyedField(kind: KeyedKind, type: typeof RoleType) {
  const Name = type.name;
  const input = new GraphQLInputObjectType({
    name: `Create${Name}Input`,
    fields: {
      key: { type: requiredString.type, description: `The key of the ${kind}.` },
      name: { type: GraphQLString, description: `The optional name of the ${kind}.` },
      description: { type: GraphQLString, description: `The optional description of the ${kind}.` },
    },
  });
  const payload = new GraphQLObjectType({
    name: `Create${Name}Payload`,
    fields: { [kind]: { type: nonNull(type) } },
  });
  return {
    type: nonNull(payload),
    description: `Creates a ${kind} that imports can assign.`,
    args: { input: { type: nonNull(input) } },
    resolve: async (_root: unknown, args: { input: KeyedInput }, { db, project }: GraphQLContext) => {
      const creation = await createKeyed(db, project.id, kind, args.input);
      if ('created' in creation) return { [kind]: creation.created };
      if (creation.refused === 'duplicate key')
        throw new ApiError(DUPLICATE_KEY[kind], `duplicate ${kind} key`, { key: args.input.key });
      throw new ApiError('ValidationFailed', `invalid ${kind} key`, {
        causes: [{ location: '/key', kind: 'pattern', details: { pattern: KEY_PATTERN.source } }],
      });
    },
  };
}

const DUPLICATE_KEY: Record<KeyedKind, 'RoleDuplicateKey' | 'GroupDuplicateKey'> = {
  role: 'RoleDuplicateKey',
  group: 'GroupDuplicateKey',
};

const Mutation = new GraphQLObjectType<unknown, GraphQLContext>({
  name: 'Mutation',
  fields: {
    createRole: createKeyedField('role', RoleType),
    createGroup: createKeyedField('group', GroupType),
  },
});

/** The administrative graph interface of decisions 4.5, in the shapes of Authgear's admin schema. */
export const adminSchema = new GraphQLSchema({
  description:
    `Limits of one request: a document of ${GRAPHQL_LIMITS.documentBytes} bytes, depth ${GRAPHQL_LIMITS.depth}, ` +
    `${GRAPHQL_LIMITS.aliases} aliases, a cost of ${GRAPHQL_LIMITS.cost} (a field costs 1 plus its selections, ` +
    'times its `first` when given); each refusal is a 400 Invalid whose reason names the limit.',
  query: Query,
  mutation: Mutation,
  // Reached only through the Node interface or a connection: listed so node(id:) can answer them.
  types: [UserType, RoleType, GroupType, IdentityType],
});
