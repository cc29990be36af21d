import { GraphQLScalarType } from 'graphql';

/** RFC 3339 timestamp in UTC with fractional seconds. */
export const DateTimeType = new GraphQLScalarType<Date | string, string>({
  name: 'DateTime',
  description: 'RFC 3339 timestamp in UTC with fractional seconds.',
  serialize: (value) => (value instanceof Date ? value : new Date(value as string)).toISOString(),
});

/** A JSON object scalar under one of Authgear's names (its members depend on the user or provider). */
export const jsonObject = (name: string, description: string) => new GraphQLScalarType({ name, description });

export const UserStandardAttributesType = jsonObject(
  'UserStandardAttributes',
  'Standard attributes the user has, with updated_at in seconds since the epoch.',
);
export const UserCustomAttributesType = jsonObject(
  'UserCustomAttributes',
  'The custom attributes the project declares that the user has.',
);
export const IdentityClaimsType = jsonObject('IdentityClaims', 'The claims of an identity.');
