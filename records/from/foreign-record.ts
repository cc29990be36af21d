import type { FirebaseScryptParams } from '../../schemas/password-formats.js';

/** An import record mapped from another system's user, and the members of it that have no place here. */
export interface ForeignRecord {
  readonly record: Record<string, unknown>;
  /** Paths (`logins_count`, `identities/0`) of the source members left out, for the results file. */
  readonly unmapped: readonly string[];
}

/** The systems whose user files `userctl import --from` reads. */
export const FOREIGN_SYSTEMS = ['auth0', 'firebase', 'cognito', 'clerk', 'keycloak'] as const;
export type ForeignSystem = (typeof FOREIGN_SYSTEMS)[number];

/** Firebase's project hash parameters, given as flags as `firebase auth:import` takes them. */
export type FirebaseHashFlags = FirebaseScryptParams;

/** Whether a value of a source file is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of a JSON text; undefined when it is not JSON. */
export function jsonValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON object written as text (a Keycloak credential's data, a line of a file); undefined otherwise. */
export function jsonObject(text: unknown): Record<string, unknown> | undefined {
  const value = typeof text === 'string' ? jsonValue(text) : undefined;
  return isObject(value) ? value : undefined;
}

/**
 * A social login of another system as an OAuth connection of the record, under one of the
 * project's provider aliases (its `oauth_providers`, whose defaults are google, facebook, github and
 * apple, each of its own type), found again by `getUserByOAuth(alias, subject)`. A provider of
 * another type is named `ALIAS:TYPE` (`company-sso:azureadv2`).
 */
export function oauthIdentity(
  provider: string,
  subject: string,
  profile?: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const [alias = provider, type = alias] = provider.split(':');
  return {
    type: 'oauth',
    oauth: {
      provider_alias: alias,
      provider_type: type,
      provider_subject_id: subject,
      ...(profile ? { user_profile: { ...profile } } : {}),
    },
  };
}

/**
 * Copies the members named in `map` (source name -> record member) that are set, and lists every
 * other member of the source as unmapped (those in `handled` are the caller's to take).
 */
export function mapMembers(
  source: Readonly<Record<string, unknown>>,
  map: Readonly<Record<string, string>>,
  handled: ReadonlySet<string>,
): { record: Record<string, unknown>; unmapped: string[] } {
  const record: Record<string, unknown> = {};
  const unmapped: string[] = [];
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || value === null || value === '') continue;
    const member = map[name];
    if (member) record[member] = value;
    else if (!handled.has(name)) unmapped.push(name);
  }
  return { record, unmapped };
}
