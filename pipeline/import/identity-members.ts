import type { ImportRecord, SchemaCause } from '../../schemas/index.js';
import type { LoginIdKey, ProjectConfig } from '../config.js';
import { ATTRIBUTE_OF_KEY } from '../identity/login-id-attributes.js';
import type { Normalized } from '../identity/normalize.js';

/** An OAuth connection of an import record, checked against the project's providers. */
export interface OAuthIdentity {
  readonly alias: string;
  readonly type: string;
  readonly subject: string;
  readonly claims: Record<string, unknown>;
  readonly profile: Record<string, unknown>;
  /** The claims' email, phone number and username, normalized for the standard-attribute lookups. */
  readonly email: string | null;
  readonly phone: string | null;
  readonly username: string | null;
}

type LoginIds = Map<LoginIdKey, { value: string; original: string } | null>;
export type Normalizers = Readonly<Record<LoginIdKey, (value: string) => Normalized>>;

/** The key of an OAuth connection in ownership maps: provider alias and subject id. */
export function oauthKey(alias: string, subject: string): string {
  return `oauth\u0000${alias}\u0000${subject}`;
}

/**
 * Reads `identities` as the ndjson export writes them. A login id stands for the record's member
 * of its key (it may only agree with it) and keeps its original value; an OAuth connection must
 * name a configured provider alias with its type. `value`, `type` and the claims of a login id
 * are the export's derivations: read, never trusted.
 */
export function readIdentities(
  record: ImportRecord,
  project: ProjectConfig,
  normalizers: Normalizers,
  causes: SchemaCause[],
): { loginIds: LoginIds; oauth: OAuthIdentity[] | undefined } {
  const loginIds: LoginIds = new Map();
  if (record.identities === undefined) return { loginIds, oauth: undefined };
  const oauth: OAuthIdentity[] = [];
  const seen = new Set<string>();
  const readOne = (identity: (typeof record.identities)[number], i: number): boolean => {
    const at = `/identities/${i}`;
    const fail = (path: string, kind: string, message: string): false => {
      causes.push({ location: `${at}${path}`, kind, details: { message } });
      return false;
    };
    if (identity.type === 'login_id') {
      const { key, original_value: original } = identity.login_id;
      if (!project.loginIdKeys.has(key))
        return fail('/login_id/key', 'loginID', `login id key ${key} is not enabled`);
      if (loginIds.has(key)) return fail('/login_id/key', 'uniqueItems', `a second login id of key ${key}`);
      const normalized = normalizers[key](original);
      if (!normalized.ok) return fail('/login_id/original_value', 'format', normalized.problem);
      const member = ATTRIBUTE_OF_KEY[key];
      const given = record[member];
      const agrees = (value: string) => {
        const other = normalizers[key](value);
        return other.ok && other.value === normalized.value;
      };
      if (given !== undefined && (given === null || !agrees(given))) {
        return fail('/login_id/original_value', 'conflict', `the login id disagrees with ${member}`);
      }
      loginIds.set(key, { value: normalized.value, original });
      return true;
    }
    const { provider_alias: alias, provider_type: type, provider_subject_id: subject } = identity.oauth;
    const configured = project.oauthProviders.get(alias);
    if (configured === undefined)
      return fail('/oauth/provider_alias', 'oauthProvider', `provider alias ${alias} is not configured`);
    if (configured !== type)
      return fail('/oauth/provider_type', 'oauthProvider', `provider ${alias} is of type ${configured}`);
    if (seen.has(oauthKey(alias, subject)))
      return fail('/oauth/provider_subject_id', 'uniqueItems', 'the same connection twice');
    seen.add(oauthKey(alias, subject));
    const claims = identity.claims ?? {};
    const claim = (name: string, normalize: (v: string) => Normalized): string | null => {
      const value = claims[name];
      if (value === undefined || value === null) return null;
      const normalized = typeof value === 'string' ? normalize(value) : undefined;
      if (normalized?.ok) return normalized.value;
      fail(`/claims/${name}`, 'format', normalized?.problem ?? 'must be a string');
      return null;
    };
    oauth.push({
      alias,
      type,
      subject,
      claims,
      profile: identity.oauth.user_profile ?? {},
      email: claim('email', normalizers.email),
      phone: claim('phone_number', normalizers.phone),
      username: claim('preferred_username', normalizers.username),
    });
    return true;
  };
  for (const [i, identity] of record.identities.entries()) readOne(identity, i);
  return { loginIds, oauth };
}

/** The login ids of `identities` (in their order, with their original values), then the record's others. */
export function mergeLoginIds(fromIdentities: LoginIds, fromMembers: LoginIds): LoginIds {
  const merged: LoginIds = new Map(fromIdentities);
  for (const [key, value] of fromMembers) if (!merged.has(key)) merged.set(key, value);
  return merged;
}
