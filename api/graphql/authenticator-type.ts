import { GraphQLBoolean, GraphQLList, GraphQLObjectType, GraphQLString } from 'graphql';
import type { UserRecord } from '../../pipeline/db/lookup-records.js';
import type { AuthenticatorRecord } from '../../pipeline/db/user-authenticators.js';
import { connectionType, listConnection, pageArguments } from './connections.js';
import type { GraphQLContext } from './context.js';
import {
  EntityInterface,
  entityFields,
  enumOf,
  listOf,
  NodeInterface,
  nonNull,
  pickClaims,
} from './entity-types.js';
import { jsonObject } from './scalars.js';

const AuthenticatorKindEnum = enumOf('AuthenticatorKind', ['PRIMARY', 'SECONDARY']);
const AuthenticatorTypeEnum = enumOf('AuthenticatorType', [
  'OOB_OTP_EMAIL',
  'OOB_OTP_SMS',
  'PASSKEY',
  'PASSWORD',
  'TOTP',
]);

/** An authenticator with what Authgear shows of it; `is_default`: the user's first secondary one. */
type ShownAuthenticator = AuthenticatorRecord & { readonly is_default: boolean };

/**
 * The claims of an authenticator: the address of an OOB one under the claims namespace. A password
 * or a TOTP authenticator shows none (its hash or secret never leaves the database).
 */
function authenticatorClaims(a: AuthenticatorRecord, namespace: string): Record<string, string> {
  if (a.type === 'oob_otp_email' && a.email) return { [`${namespace}/oob_otp/email`]: a.email };
  if (a.type === 'oob_otp_sms' && a.phone) return { [`${namespace}/oob_otp/phone`]: a.phone };
  return {};
}

export const AuthenticatorType = new GraphQLObjectType<ShownAuthenticator, GraphQLContext>({
  name: 'Authenticator',
  interfaces: [EntityInterface, NodeInterface],
  fields: {
    ...entityFields,
    kind: { type: nonNull(AuthenticatorKindEnum), resolve: (a) => a.kind.toUpperCase() },
    type: { type: nonNull(AuthenticatorTypeEnum), resolve: (a) => a.type.toUpperCase() },
    isDefault: { type: nonNull(GraphQLBoolean), resolve: (a) => a.is_default },
    claims: {
      type: nonNull(jsonObject('AuthenticatorClaims', 'The claims of an authenticator.')),
      args: { names: { type: new GraphQLList(nonNull(GraphQLString)) } },
      resolve: (a, { names }: { names?: string[] | null }, { project }) => {
        return pickClaims(authenticatorClaims(a, project.claimsNamespace), names);
      },
    },
  },
});

const AuthenticatorConnectionType = connectionType(AuthenticatorType);

async function authenticatorsOf(
  user: UserRecord,
  { lookups }: GraphQLContext,
): Promise<ShownAuthenticator[]> {
  const all = await lookups.authenticatorsOf(user.id);
  const firstSecondary = all.find((a) => a.kind === 'secondary');
  return all.map((a) => ({ ...a, is_default: a === firstSecondary }));
}

/** One authenticator of a kind and type, or null. */
const single = (kind: string, type: string) => ({
  type: AuthenticatorType,
  resolve: async (u: UserRecord, _args: unknown, context: GraphQLContext) =>
    (await authenticatorsOf(u, context)).find((a) => a.kind === kind && a.type === type) ?? null,
});

/** Every authenticator of a kind and type. */
const several = (kind: string, type: string) => ({
  type: listOf(AuthenticatorType),
  resolve: async (u: UserRecord, _args: unknown, context: GraphQLContext) =>
    (await authenticatorsOf(u, context)).filter((a) => a.kind === kind && a.type === type),
});

/** The User fields of Authgear's schema that show authenticators, read only when asked for. */
export const authenticatorFields = {
  authenticators: {
    type: AuthenticatorConnectionType,
    args: {
      ...pageArguments,
      authenticatorKind: { type: AuthenticatorKindEnum },
      authenticatorType: { type: AuthenticatorTypeEnum },
    },
    resolve: async (
      u: UserRecord,
      args: { first?: number; after?: string; authenticatorKind?: string; authenticatorType?: string },
      context: GraphQLContext,
    ) =>
      listConnection(
        (await authenticatorsOf(u, context)).filter(
          (a) =>
            (!args.authenticatorKind || a.kind.toUpperCase() === args.authenticatorKind) &&
            (!args.authenticatorType || a.type.toUpperCase() === args.authenticatorType),
        ),
        args,
      ),
  },
  primaryPassword: single('primary', 'password'),
  secondaryPassword: single('secondary', 'password'),
  primaryOOBOTPEmailAuthenticator: single('primary', 'oob_otp_email'),
  primaryOOBOTPSMSAuthenticator: single('primary', 'oob_otp_sms'),
  secondaryOOBOTPEmailAuthenticators: several('secondary', 'oob_otp_email'),
  secondaryOOBOTPSMSAuthenticators: several('secondary', 'oob_otp_sms'),
  secondaryTOTPAuthenticators: several('secondary', 'totp'),
};
