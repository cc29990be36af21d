import { type ForeignRecord, type ForeignSystem, isObject } from './foreign-record.js';

/**
 * What a run maps that each tenant of a system keeps in its own place: userctl import's
 * `--provider NAME=ALIAS`, `--roles-from PATH`, `--groups-from PATH` and `--attribute PATH=NAME`.
 * Paths name members of the source user as `--plan` prints them (`app_metadata/roles`).
 */
export interface SourceMapping {
  /** Source provider -> the project's OAuth provider alias, over the system's defaults. */
  readonly providers?: Readonly<Record<string, string>>;
  /** The member whose list (or `;`-separated text) is the user's roles. */
  readonly rolesFrom?: string;
  /** The member whose list (or `;`-separated text) is the user's groups. */
  readonly groupsFrom?: string;
  /** Source member -> the declared custom attribute that keeps it (the source's id, its signup time). */
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * Each system's social providers as the service's OAuth provider aliases (the project's
 * `oauth_providers`, whose defaults these are). A provider missing here is left out and listed,
 * unless `--provider` names its alias.
 */
const PROVIDER_DEFAULTS: Readonly<Record<ForeignSystem, Readonly<Record<string, string>>>> = {
  auth0: { 'google-oauth2': 'google', facebook: 'facebook', github: 'github', apple: 'apple' },
  firebase: {
    'google.com': 'google',
    'facebook.com': 'facebook',
    'github.com': 'github',
    'apple.com': 'apple',
  },
  cognito: { Google: 'google', Facebook: 'facebook', SignInWithApple: 'apple' },
  keycloak: { google: 'google', facebook: 'facebook', github: 'github', apple: 'apple' },
  clerk: {},
};

/** The member that holds a user's signup time in each system, written as RFC 3339 when kept. */
const SIGNUP_TIME: Readonly<Record<ForeignSystem, string>> = {
  auth0: 'created_at',
  firebase: 'createdAt',
  cognito: 'UserCreateDate',
  keycloak: 'createdTimestamp',
  clerk: 'created_at',
};

/** The OAuth provider aliases of a system's providers, the run's `--provider` over the defaults. */
export function providerAliases(
  system: ForeignSystem,
  mapping: SourceMapping,
): Readonly<Record<string, string>> {
  return { ...PROVIDER_DEFAULTS[system], ...mapping.providers };
}

/**
 * A mapped user with the run's mapping applied: roles and groups from the members that hold them
 * (as keys the service takes), and the members kept in custom attributes. What is taken is no
 * longer listed as unmapped; the rest of a member it was taken from still is, member by member.
 */
export function applyMapping(
  system: ForeignSystem,
  user: Readonly<Record<string, unknown>>,
  mapped: ForeignRecord,
  mapping: SourceMapping,
): ForeignRecord {
  const record = { ...mapped.record };
  const unmapped = [...mapped.unmapped];
  for (const [member, path] of [
    ['roles', mapping.rolesFrom],
    ['groups', mapping.groupsFrom],
  ] as const) {
    if (path === undefined) continue;
    const names = listAt(user, path);
    if (names === undefined) continue;
    record[member] = [...new Set([...((record[member] as string[] | undefined) ?? []), ...names])];
    release(unmapped, user, path);
  }
  for (const member of ['roles', 'groups'] as const) {
    const names = record[member] as string[] | undefined;
    if (names) record[member] = [...new Set(names.map(keyOf))];
  }
  const custom: Record<string, unknown> = isObject(record.custom_attributes)
    ? { ...record.custom_attributes }
    : {};
  for (const [path, name] of Object.entries(mapping.attributes ?? {})) {
    const value = valueAt(user, path);
    if (value === undefined || value === null || value === '') continue;
    custom[name] = path === SIGNUP_TIME[system] ? (timeOf(value) ?? value) : value;
    release(unmapped, user, path);
  }
  if (Object.keys(custom).length > 0) record.custom_attributes = custom;
  return { record, unmapped };
}

/**
 * A role or group name as a key the service takes (letters, digits, `_` and `:`, not starting
 * with a digit): Keycloak's `/parent/child` group paths become `parent:child`, other characters `_`.
 */
export function keyOf(name: string): string {
  const key = name
    .replace(/^\/+/, '')
    .replaceAll('/', ':')
    .replace(/[^A-Za-z0-9:_]/g, '_');
  return /^[A-Za-z_]/.test(key) ? key : `_${key}`;
}

/** The value at a path of the source user (`app_metadata/roles`, `identities/0/user_id`). */
export function valueAt(user: unknown, path: string): unknown {
  let node = user;
  for (const part of path.split('/')) {
    if (Array.isArray(node) && /^\d+$/.test(part)) node = node[Number(part)];
    else if (isObject(node) && Object.hasOwn(node, part)) node = node[part];
    else return undefined;
  }
  return node;
}

/** A list of names at a path: an array of strings, or text separated by `;` or `,`. */
function listAt(user: unknown, path: string): string[] | undefined {
  const value = valueAt(user, path);
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[;,]/) : undefined;
  return items
    ?.filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * Takes a path off the unmapped list: the path itself, or, when a member above it is listed whole,
 * that member's other members in its place (`app_metadata` -> `app_metadata/plan`, ...).
 */
function release(unmapped: string[], user: unknown, path: string): void {
  const at = unmapped.indexOf(path);
  if (at >= 0) {
    unmapped.splice(at, 1);
    return;
  }
  const parts = path.split('/');
  for (let depth = parts.length - 1; depth > 0; depth--) {
    const above = parts.slice(0, depth).join('/');
    const listed = unmapped.indexOf(above);
    if (listed < 0) continue;
    const node = valueAt(user, above);
    const children = isObject(node)
      ? Object.keys(node)
      : Array.isArray(node)
        ? node.map((_, i) => `${i}`)
        : [];
    unmapped.splice(listed, 1, ...children.map((child) => `${above}/${child}`));
    release(unmapped, user, path);
    return;
  }
}

/** A signup time as RFC 3339 UTC: an ISO text, or epoch milliseconds (seconds when small). */
function timeOf(value: unknown): string | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)
        ? Number(value)
        : undefined;
  const date =
    number !== undefined
      ? new Date(number < 1e11 ? number * 1000 : number)
      : typeof value === 'string'
        ? new Date(value)
        : undefined;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined;
}
