import { GraphQLBoolean, GraphQLID, GraphQLObjectType, type GraphQLScalarType, GraphQLString } from 'graphql';
import type { UserRecord } from '../../pipeline/db/lookup-records.js';
import { authenticatorFields } from './authenticator-type.js';
import { connectionType, listConnection, pageArguments } from './connections.js';
import type { GraphQLContext } from './context.js';
import {
  ClaimType,
  EntityInterface,
  GroupType,
  type IdentityRecord,
  IdentityType,
  IdentityTypeEnum,
  listOf,
  NodeInterface,
  nonNull,
  RoleType,
} from './entity-types.js';
import { DateTimeType, UserCustomAttributesType, UserStandardAttributesType } from './scalars.js';

export const RoleConnectionType = connectionType(RoleType);
export const GroupConnectionType = connectionType(GroupType);
const IdentityConnectionType = connectionType(IdentityType);

const loginIds = (u: UserRecord): IdentityRecord[] =>
  u.login_ids.map((l) => ({ ...l, identity_type: 'LOGIN_ID' as const }));
const oauthConnections = (u: UserRecord): IdentityRecord[] =>
  u.oauth_connections.map((c) => ({ ...c, identity_type: 'OAUTH' as const }));

type Attributes = Readonly<Record<string, unknown>>;
const text = (a: Attributes, name: string) =>
  typeof a[name] === 'string' && a[name] !== '' ? (a[name] as string) : undefined;

/** The user's name as Authgear formats it: `name`, else given, middle and family names, else the nickname. */
export function formattedName(a: Attributes): string | null {
  const parts = ['given_name', 'middle_name', 'family_name'].map((n) => text(a, n)).filter(Boolean);
  return text(a, 'name') ?? (parts.length > 0 ? parts.join(' ') : undefined) ?? text(a, 'nickname') ?? null;
}

/** The account id an end user knows: the email, else the username, else the phone number. */
export function endUserAccountId(a: Attributes): string | null {
  return text(a, 'email') ?? text(a, 'preferred_username') ?? text(a, 'phone_number') ?? null;
}

/** An account-state field this service does not manage: always its neutral value (docs/decisions.md). */
const neutral = (type: GraphQLScalarType, value: false | null) => ({
  type: value === false ? nonNull(type) : type,
  description: 'Not managed by this service: always its neutral value.',
  resolve: () => value,
});

export const UserType = new GraphQLObjectType<UserRecord, GraphQLContext>({
  name: 'User',
  description: 'Authgear user',
  interfaces: [EntityInterface, NodeInterface],
  fields: {
    id: { type: nonNull(GraphQLID) },
    createdAt: { type: nonNull(DateTimeType), resolve: (u) => u.created_at },
    updatedAt: { type: nonNull(DateTimeType), resolve: (u) => u.updated_at },
    lastLoginAt: {
      type: DateTimeType,
      description: 'The last login time of user',
      resolve: (u) => u.last_login_at,
    },
    isDisabled: { type: nonNull(GraphQLBoolean), resolve: (u) => u.is_disabled },
    disableReason: neutral(GraphQLString, null),
    isAnonymous: neutral(GraphQLBoolean, false),
    isAnonymized: neutral(GraphQLBoolean, false),
    isDeactivated: neutral(GraphQLBoolean, false),
    temporarilyDisabledFrom: neutral(DateTimeType, null),
    temporarilyDisabledUntil: neutral(DateTimeType, null),
    accountValidFrom: {
      type: DateTimeType,
      description: 'The account may be used from this time on (null: from any time)',
      resolve: (u) => u.account_valid_from,
    },
    accountValidUntil: {
      type: DateTimeType,
      description: 'The account may be used until this time (null: without end)',
      resolve: (u) => u.account_valid_until,
    },
    deleteAt: neutral(DateTimeType, null),
    anonymizeAt: neutral(DateTimeType, null),
    endUserAccountID: {
      type: GraphQLString,
      description: 'The email, else the username, else the phone number.',
      resolve: (u) => endUserAccountId(u.standard_attributes),
    },
    formattedName: {
      type: GraphQLString,
      description: "The user's formatted name",
      resolve: (u) => formattedName(u.standard_attributes),
    },
    standardAttributes: { type: nonNull(UserStandardAttributesType), resolve: (u) => u.standard_attributes },
    customAttributes: { type: nonNull(UserCustomAttributesType), resolve: (u) => u.custom_attributes },
    verifiedClaims: { type: listOf(ClaimType), resolve: (u) => u.verified_claims },
    loginIDs: { type: listOf(IdentityType), resolve: loginIds },
    oauthConnections: { type: listOf(IdentityType), resolve: oauthConnections },
    ...authenticatorFields,
    passkeys: { type: listOf(IdentityType), resolve: () => [] },
    biometricRegistrations: { type: listOf(IdentityType), resolve: () => [] },
    identities: {
      type: IdentityConnectionType,
      args: { ...pageArguments, identityType: { type: IdentityTypeEnum } },
      resolve: (u, args: { first?: number; after?: string; identityType?: string }) =>
        listConnection(
          [...loginIds(u), ...oauthConnections(u)].filter(
            (i) => !args.identityType || i.identity_type === args.identityType,
          ),
          args,
        ),
    },
    roles: {
      type: RoleConnectionType,
      args: pageArguments,
      resolve: (u, args) => listConnection(u.roles, args),
    },
    groups: {
      type: GroupConnectionType,
      args: pageArguments,
      resolve: (u, args) => listConnection(u.groups, args),
    },
    effectiveRoles: {
      type: RoleConnectionType,
      description: 'The roles the user has: its own (groups carry no roles in this service).',
      args: pageArguments,
      resolve: (u, args) => listConnection(u.roles, args),
    },
  },
});
