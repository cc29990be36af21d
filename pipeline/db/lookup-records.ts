import { RELATED, relatedExists, relatedJson } from './user-related-rows.js';

/** A user as the lookups return it: attributes, identities, roles and groups; no secrets. */
export interface UserRecord {
  readonly id: string;
  readonly created_at: Date;
  readonly updated_at: Date;
  readonly last_login_at: Date | null;
  /** The period the account may be used in; null: open on that side. */
  readonly account_valid_from: Date | null;
  readonly account_valid_until: Date | null;
  readonly is_disabled: boolean;
  /** Stored standard attributes plus `email_verified`, `phone_number_verified` and `updated_at` (epoch s). */
  readonly standard_attributes: Readonly<Record<string, unknown>>;
  readonly custom_attributes: Readonly<Record<string, unknown>>;
  readonly login_ids: readonly LoginIdRecord[];
  readonly oauth_connections: readonly OAuthConnectionRecord[];
  /** The claims (email, phone_number) verified with their values. */
  readonly verified_claims: readonly { readonly name: string; readonly value: string }[];
  readonly roles: readonly KeyedRecord[];
  readonly groups: readonly KeyedRecord[];
}

/** What every identity has: its id and times (JSON text in a user record). */
export interface IdentityEntity {
  readonly id: string;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface LoginIdRecord extends IdentityEntity {
  readonly key: string;
  readonly type: string;
  readonly value: string;
  readonly original_value: string;
}

export interface OAuthConnectionRecord extends IdentityEntity {
  readonly provider_alias: string;
  readonly provider_type: string;
  readonly subject_id: string;
  readonly claims: Readonly<Record<string, unknown>>;
  readonly profile: Readonly<Record<string, unknown>>;
}

/** A role or a group. */
export interface KeyedRecord {
  readonly id: string;
  readonly key: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly created_at: Date | string;
  readonly updated_at: Date | string;
}

/** The members of a role or a group, as SQL over its alias (a JSON object in a user record). */
const keyedJson = (alias: string) =>
  `json_build_object('id', ${alias}.id, 'key', ${alias}.key, 'name', ${alias}.name, 'description', ${alias}.description,
                     'created_at', ${alias}.created_at, 'updated_at', ${alias}.updated_at)`;

/**
 * Whether the user's current email or phone number is verified: a verified claim of that name with
 * that value. SQL over `users u`; NULL when the user has no such attribute.
 */
export function verifiedClaimSql(claim: 'email' | 'phone_number'): string {
  return `CASE WHEN u.standard_attributes ? '${claim}' THEN ${relatedExists(
    RELATED.verifiedClaims,
    `v.name = '${claim}' AND v.value = u.standard_attributes->>'${claim}'`,
  )} END`;
}

const IDENTITY_ORDER = { order: 'i.created_at, i.id' };

/**
 * The select list that assembles one user's record from `users u`: each related set is one
 * correlated subquery on a user_id index, so a lookup stays one round trip.
 */
export const USER_RECORD_COLUMNS = `
  u.id, u.created_at, u.updated_at, u.last_login_at, u.account_valid_from, u.account_valid_until,
  u.is_disabled, u.custom_attributes,
  u.standard_attributes
    || jsonb_strip_nulls(jsonb_build_object(
         'email_verified', ${verifiedClaimSql('email')},
         'phone_number_verified', ${verifiedClaimSql('phone_number')}))
    || jsonb_build_object('updated_at', floor(extract(epoch FROM u.updated_at))::bigint)
    AS standard_attributes,
  ${relatedJson(
    RELATED.loginIds,
    `json_build_object('id', i.id, 'created_at', i.created_at, 'updated_at', i.updated_at, 'key', i.login_id_key,
                       'type', i.login_id_type, 'value', i.login_id, 'original_value', i.original_login_id)`,
    IDENTITY_ORDER,
  )} AS login_ids,
  ${relatedJson(
    RELATED.oauthConnections,
    `json_build_object('id', i.id, 'created_at', i.created_at, 'updated_at', i.updated_at,
                       'provider_alias', i.provider_alias, 'provider_type', i.provider_type,
                       'subject_id', i.provider_subject_id, 'claims', i.claims,
                       'profile', coalesce(i.profile, '{}'::jsonb))`,
    IDENTITY_ORDER,
  )} AS oauth_connections,
  ${relatedJson(RELATED.verifiedClaims, `json_build_object('name', v.name, 'value', v.value)`, { order: 'v.name, v.value' })}
    AS verified_claims,
  ${relatedJson(RELATED.roles, keyedJson('r'), { order: 'r.key' })} AS roles,
  ${relatedJson(RELATED.groups, keyedJson('g'), { order: 'g.key' })} AS groups`;
