import { PROFILE_ATTRIBUTES } from '../identity/standard-attributes.js';

// The export's records statement. Each related table (identities, authenticators, verified
// claims, role and group memberships) is read once, aggregated by user id and joined to the users:
// a scan of each table instead of an index probe per table and user (a fifth of the cost at 1M
// users; issue "export at the speed of reading the data"). COPY takes no parameters: the filters
// and options reach it as settings of the export's transaction (prepareSnapshot), an empty one
// meaning "any" or "off".

/** A setting of the export's transaction, NULL when empty. */
export const setting = (name: string) => `nullif(current_setting('export.${name}'), '')`;

/** The users an export keeps, as a condition on `users u`. */
export const USER_FILTER_SQL = `
      (${setting('created_after')} IS NULL OR u.created_at > ${setting('created_after')}::timestamptz)
  AND (${setting('updated_since')} IS NULL OR u.updated_at >= ${setting('updated_since')}::timestamptz)
  AND (${setting('disabled')} IS NULL OR u.is_disabled = ${setting('disabled')}::boolean)`;

/** The standard attributes of an exported user, in the order of the spec's pointer table. */
const STANDARD_ATTRIBUTES = [
  'preferred_username',
  'email',
  'phone_number',
  'email_verified',
  'phone_number_verified',
  ...PROFILE_ATTRIBUTES,
] as const;

/** `<claim>_verified`: whether the user's value of the claim is among its verified values (`c`). */
const verified = (claim: 'email' | 'phone_number', values: string) =>
  `CASE WHEN u.standard_attributes ? '${claim}'
        THEN coalesce(u.standard_attributes->>'${claim}' = ANY(c.${values}), false) END`;

function standardAttribute(name: (typeof STANDARD_ATTRIBUTES)[number]): string {
  if (name === 'email_verified') return `'${name}', ${verified('email', 'emails')}`;
  if (name === 'phone_number_verified') return `'${name}', ${verified('phone_number', 'phone_numbers')}`;
  return `'${name}', u.standard_attributes->'${name}'`;
}

/** A timestamp as the service writes them: RFC 3339 in UTC with microseconds. */
const utcTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A stored password hash as the import takes it back: `{type, password_hash}` (password-formats.ts). */
const passwordSql = (hash: string) => `CASE WHEN ${setting('password_hashes')} IS NOT NULL
    AND ${hash} IS NOT NULL THEN json_build_object(
    'type', CASE WHEN ${hash} LIKE '$2%' THEN 'bcrypt' ELSE replace(split_part(${hash}, '$', 2), '-', '_') END,
    'password_hash', ${hash}) END`;

/** A TOTP secret's `otpauth://` URI, its label the user's email, phone, username or id. */
const ISSUER = "uri_component(current_setting('export.totp_issuer'))";
const totpUri = (secret: string) => `'otpauth://totp/' || ${ISSUER} || ':'
    || uri_component(coalesce(u.standard_attributes->>'email', u.standard_attributes->>'phone_number',
                              u.standard_attributes->>'preferred_username', u.id::text))
    || '?algorithm=SHA1&digits=6&issuer=' || ${ISSUER} || '&period=30&secret=' || ${secret}`;

const IDENTITY_JSON = `CASE i.type
  WHEN 'login_id' THEN json_build_object('type', i.type, 'login_id', json_build_object(
    'key', i.login_id_key, 'original_value', i.original_login_id, 'type', i.login_id_type,
    'value', i.login_id), 'claims', i.claims || jsonb_strip_nulls(jsonb_build_object(
      'email', i.email, 'phone_number', i.phone_number, 'preferred_username', i.preferred_username)))
  ELSE json_build_object('type', i.type, 'oauth', json_build_object(
    'provider_alias', i.provider_alias, 'provider_type', i.provider_type,
    'provider_subject_id', i.provider_subject_id, 'user_profile', coalesce(i.profile, '{}')),
    'claims', i.claims)
  END`;

const secondary = (type: string) => `FILTER (WHERE a.kind = 'secondary' AND a.type = '${type}')`;

/**
 * The aggregated related rows of each user, one row per user id. `kept(column)` restricts a set
 * to the rows of the users an export with filters keeps, so that a small export reads little.
 */
const relatedSets = (kept: (userId: string) => string) => `
identity_sets AS (
  SELECT i.user_id, json_agg(${IDENTITY_JSON} ORDER BY i.created_at, i.id) AS identities
    FROM identities i ${kept('i.user_id')} GROUP BY i.user_id),
role_sets AS (
  SELECT ur.user_id, json_agg(r.key ORDER BY r.key) AS roles
    FROM user_roles ur JOIN roles r ON r.id = ur.role_id ${kept('ur.user_id')}
   GROUP BY ur.user_id),
group_sets AS (
  SELECT ug.user_id, json_agg(g.key ORDER BY g.key) AS groups
    FROM user_groups ug JOIN groups g ON g.id = ug.group_id ${kept('ug.user_id')}
   GROUP BY ug.user_id),
claim_sets AS (
  SELECT v.user_id, array_agg(v.value) FILTER (WHERE v.name = 'email') AS emails,
         array_agg(v.value) FILTER (WHERE v.name = 'phone_number') AS phone_numbers
    FROM verified_claims v ${kept('v.user_id')} GROUP BY v.user_id),
factor_sets AS (
  SELECT a.user_id,
         min(a.password_hash) FILTER (WHERE a.kind = 'primary' AND a.type = 'password') AS password_hash,
         json_agg(a.email ORDER BY a.created_at, a.id) ${secondary('oob_otp_email')} AS emails,
         json_agg(a.phone ORDER BY a.created_at, a.id) ${secondary('oob_otp_sms')} AS phone_numbers,
         array_agg(a.totp_secret ORDER BY a.created_at, a.id) ${secondary('totp')} AS totp_secrets,
         min(a.password_hash) ${secondary('password')} AS mfa_password_hash
    FROM authenticators a ${kept('a.user_id')} GROUP BY a.user_id)`;

/**
 * One user's full export record as JSON per row, in creation order (created_at, id): standard
 * attributes, roles, groups, disabled, identities, second factors, custom attributes. Missing and
 * null members are dropped (json_strip_nulls). TOTP URIs name the issuer set in
 * `export.totp_issuer`. The service keeps no biometrics or passkeys, so their counts are 0.
 * `created_at` and `updated_at` are there only when `export.times` is set (TIME_POINTERS);
 * `password` and `mfa.password` only when `export.password_hashes` is (include_password_hashes).
 * `filtered`: the export has filters, and the related sets read only the kept users' rows.
 */
export function userRecordsSql({ filtered }: { filtered: boolean }): string {
  const kept = (userId: string) =>
    filtered ? `WHERE ${userId} IN (SELECT u.id FROM users u WHERE ${USER_FILTER_SQL})` : '';
  return `
WITH ${relatedSets(kept)}
SELECT json_strip_nulls(json_build_object(
  'sub', u.id,
  'created_at', CASE WHEN ${setting('times')} IS NOT NULL THEN ${utcTime('u.created_at')} END,
  'updated_at', CASE WHEN ${setting('times')} IS NOT NULL THEN ${utcTime('u.updated_at')} END,
  ${STANDARD_ATTRIBUTES.map(standardAttribute).join(',\n  ')},
  'roles', coalesce(r.roles, '[]'),
  'groups', coalesce(g.groups, '[]'),
  'disabled', u.is_disabled,
  'password', ${passwordSql('f.password_hash')},
  'identities', coalesce(i.identities, '[]'),
  'mfa', json_build_object(
    'emails', coalesce(f.emails, '[]'),
    'phone_numbers', coalesce(f.phone_numbers, '[]'),
    'totps', CASE WHEN f.totp_secrets IS NULL THEN '[]' ELSE (
      SELECT json_agg(json_build_object('secret', t.secret, 'uri', ${totpUri('t.secret')}) ORDER BY t.n)
        FROM unnest(f.totp_secrets) WITH ORDINALITY AS t (secret, n)) END,
    'password', ${passwordSql('f.mfa_password_hash')}),
  'biometric_count', 0,
  'passkey_count', 0,
  'custom_attributes', u.custom_attributes
))
FROM users u
LEFT JOIN identity_sets i ON i.user_id = u.id
LEFT JOIN role_sets r ON r.user_id = u.id
LEFT JOIN group_sets g ON g.user_id = u.id
LEFT JOIN claim_sets c ON c.user_id = u.id
LEFT JOIN factor_sets f ON f.user_id = u.id
WHERE ${USER_FILTER_SQL}
ORDER BY u.created_at, u.id`;
}
