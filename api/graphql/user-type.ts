import {
  GraphQLBoolean,
  GraphQLID,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLNullableType,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
} from 'graphql';
import type {
  KeyedRecord,
  LoginIdRecord,
  OAuthConnectionRecord,
  UserRecord,
} from '../../pipeline/db/lookup-records.js';
import type { GraphQLContext } from './context.js';

export const nonNull = <T extends GraphQLNullableType>(t: T) => new GraphQLNonNull(t);
export const listOf = <T extends GraphQLNullableType>(t: T) => nonNull(new GraphQLList(nonNull(t)));

/** A JSON object: attributes and claims, whose members depend on the user and the provider. */
export const JSONObjectType = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object.',
});

/** RFC 3339 timestamp in UTC with fractional seconds. */
export const DateTimeType = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'RFC 3339 timestamp in UTC with fractional seconds.',
  serialize: (value) => (value as Date).toISOString(),
});

const keyedType = (name: 'Role' | 'Group') =>
  new GraphQLObjectType<KeyedRecord, GraphQLContext>({
    name,
    fields: {
      id: { type: nonNull(GraphQLID) },
      key: { type: nonNull(GraphQLString) },
      name: { type: GraphQLString },
    },
  });

export const RoleType = keyedType('Role');
export const GroupType = keyedType('Group');

const LoginIDType = new GraphQLObjectType<LoginIdRecord, GraphQLContext>({
  name: 'LoginID',
  fields: {
    key: { type: nonNull(GraphQLString) },
    type: { type: nonNull(GraphQLString) },
    value: { type: nonNull(GraphQLString), description: 'Normalized value.' },
    originalValue: { type: nonNull(GraphQLString), resolve: (l) => l.original_value },
  },
});

const OAuthConnectionType = new GraphQLObjectType<OAuthConnectionRecord, GraphQLContext>({
  name: 'OAuthConnection',
  fields: {
    providerAlias: { type: nonNull(GraphQLString), resolve: (c) => c.provider_alias },
    providerType: { type: nonNull(GraphQLString), resolve: (c) => c.provider_type },
    subjectID: { type: nonNull(GraphQLString), resolve: (c) => c.subject_id },
    claims: {
      type: nonNull(JSONObjectType),
      description: 'Provider claims, and the oauth/* members under the claims namespace (spec 2.5).',
      resolve: (c, _args, { project }) => oauthClaims(c, project.claimsNamespace),
    },
  },
});

/** The claims of an OAuth connection as spec 2.5 shows them. */
export function oauthClaims(c: OAuthConnectionRecord, namespace: string): Record<string, unknown> {
  return {
    ...c.claims,
    [`${namespace}/oauth/profile`]: c.profile,
    [`${namespace}/oauth/provider_alias`]: c.provider_alias,
    [`${namespace}/oauth/provider_type`]: c.provider_type,
    [`${namespace}/oauth/subject_id`]: c.subject_id,
  };
}

export const UserType = new GraphQLObjectType<UserRecord, GraphQLContext>({
  name: 'User',
  fields: {
    id: { type: nonNull(GraphQLID) },
    createdAt: { type: nonNull(DateTimeType), resolve: (u) => u.created_at },
    updatedAt: { type: nonNull(DateTimeType), resolve: (u) => u.updated_at },
    isDisabled: { type: nonNull(GraphQLBoolean), resolve: (u) => u.is_disabled },
    standardAttributes: {
      type: nonNull(JSONObjectType),
      description: 'Standard attributes the user has, with updated_at in seconds since the epoch.',
      resolve: (u) => u.standard_attributes,
    },
    customAttributes: { type: nonNull(JSONObjectType), resolve: (u) => u.custom_attributes },
    loginIDs: { type: listOf(LoginIDType), resolve: (u) => u.login_ids },
    oauthConnections: { type: listOf(OAuthConnectionType), resolve: (u) => u.oauth_connections },
    roles: { type: listOf(RoleType) },
    groups: { type: listOf(GroupType) },
  },
});
