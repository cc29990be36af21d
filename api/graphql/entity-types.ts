import {
  GraphQLEnumType,
  GraphQLID,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLNullableType,
  GraphQLObjectType,
  GraphQLString,
} from 'graphql';
import type { LoginIdKey } from '../../pipeline/config.js';
import type {
  IdentityEntity,
  KeyedRecord,
  LoginIdRecord,
  OAuthConnectionRecord,
} from '../../pipeline/db/lookup-records.js';
import { ATTRIBUTE_OF_KEY } from '../../pipeline/identity/login-id-attributes.js';
import type { GraphQLContext } from './context.js';
import { DateTimeType, IdentityClaimsType } from './scalars.js';

export const nonNull = <T extends GraphQLNullableType>(t: T) => new GraphQLNonNull(t);
export const listOf = <T extends GraphQLNullableType>(t: T) => nonNull(new GraphQLList(nonNull(t)));

/** Authgear's Node and Entity interfaces; `node(id:)` answers values tagged with `__typename`. */
export const NodeInterface = new GraphQLInterfaceType({
  name: 'Node',
  description: 'An object with an ID',
  fields: { id: { type: nonNull(GraphQLID), description: 'The id of the object' } },
});

export const EntityInterface = new GraphQLInterfaceType({
  name: 'Entity',
  fields: {
    createdAt: { type: nonNull(DateTimeType), description: 'The creation time of entity' },
    id: { type: nonNull(GraphQLID), description: 'The ID of entity' },
    updatedAt: { type: nonNull(DateTimeType), description: 'The update time of entity' },
  },
});

type Timed = { created_at: Date | string; updated_at: Date | string };

/** id, createdAt and updatedAt, as every Entity has them. */
export const entityFields = {
  id: { type: nonNull(GraphQLID) },
  createdAt: { type: nonNull(DateTimeType), resolve: (e: Timed) => e.created_at },
  updatedAt: { type: nonNull(DateTimeType), resolve: (e: Timed) => e.updated_at },
};

const keyedType = (name: 'Role' | 'Group') =>
  new GraphQLObjectType<KeyedRecord, GraphQLContext>({
    name,
    description: `Authgear ${name.toLowerCase()}`,
    interfaces: [EntityInterface, NodeInterface],
    fields: {
      ...entityFields,
      key: { type: nonNull(GraphQLString), description: `The key of the ${name.toLowerCase()}.` },
      name: { type: GraphQLString, description: `The optional name of the ${name.toLowerCase()}.` },
      description: {
        type: GraphQLString,
        description: `The optional description of the ${name.toLowerCase()}.`,
      },
    },
  });

export const RoleType = keyedType('Role');
export const GroupType = keyedType('Group');

export const ClaimType = new GraphQLObjectType({
  name: 'Claim',
  fields: { name: { type: nonNull(GraphQLString) }, value: { type: nonNull(GraphQLString) } },
});

/** A login id or an OAuth connection of a user, as Authgear's Identity shows it. */
export type IdentityRecord =
  | (LoginIdRecord & { readonly identity_type: 'LOGIN_ID' })
  | (OAuthConnectionRecord & { readonly identity_type: 'OAUTH' });

/** `claims(names:)`: the claims named, or all of them. */
export function pickClaims<T>(
  claims: Record<string, T>,
  names: readonly string[] | null | undefined,
): Record<string, T> {
  return names ? Object.fromEntries(Object.entries(claims).filter(([k]) => names.includes(k))) : claims;
}

/** An enum of Authgear's schema whose values are their own names. */
export const enumOf = (name: string, values: readonly string[]) =>
  new GraphQLEnumType({ name, values: Object.fromEntries(values.map((v) => [v, { value: v }])) });

export const IdentityTypeEnum = enumOf('IdentityType', [
  'ANONYMOUS',
  'BIOMETRIC',
  'LOGIN_ID',
  'OAUTH',
  'PASSKEY',
  'SIWE',
]);

export const IdentityType = new GraphQLObjectType<IdentityRecord & IdentityEntity, GraphQLContext>({
  name: 'Identity',
  interfaces: [EntityInterface, NodeInterface],
  fields: {
    ...entityFields,
    type: { type: nonNull(IdentityTypeEnum), resolve: (i) => i.identity_type },
    claims: {
      type: nonNull(IdentityClaimsType),
      description: 'The claims of the identity; with `names`, only those.',
      args: { names: { type: new GraphQLList(nonNull(GraphQLString)) } },
      resolve: (i, { names }: { names?: string[] | null }, { project }) => {
        return pickClaims(identityClaims(i, project.claimsNamespace), names);
      },
    },
  },
});

/**
 * The claims of an identity. A login id: the standard attribute it carries, and `login_id/key`,
 * `type`, `value`, `original_value` under the claims namespace. An OAuth connection: the provider's
 * claims and the oauth/* members of decisions 2.5.
 */
export function identityClaims(i: IdentityRecord, namespace: string): Record<string, unknown> {
  if (i.identity_type === 'LOGIN_ID') {
    const attribute = ATTRIBUTE_OF_KEY[i.key as LoginIdKey];
    return {
      ...(attribute ? { [attribute]: i.value } : {}),
      [`${namespace}/login_id/key`]: i.key,
      [`${namespace}/login_id/original_value`]: i.original_value,
      [`${namespace}/login_id/type`]: i.type,
      [`${namespace}/login_id/value`]: i.value,
    };
  }
  return {
    ...i.claims,
    [`${namespace}/oauth/profile`]: i.profile,
    [`${namespace}/oauth/provider_alias`]: i.provider_alias,
    [`${namespace}/oauth/provider_type`]: i.provider_type,
    [`${namespace}/oauth/subject_id`]: i.subject_id,
  };
}
