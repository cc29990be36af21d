/**
 * The standard attributes that describe a person rather than identify them (OpenID Connect
 * profile claims and address), in the order the spec lists them. Import sets them as given; export
 * writes them after the identifying ones.
 */
export const PROFILE_ATTRIBUTES = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'address',
] as const;
