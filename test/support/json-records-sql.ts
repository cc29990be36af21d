import { verifiedClaimSql } from '../../pipeline/db/lookup-records.js';
import { STANDARD_ATTRIBUTES } from '../../pipeline/export/assemble-records.js';

// The export's records statement as it was until the worker assembled the records: Postgres
// built each user's JSON (json_build_object, json_agg, json_strip_nulls). It is kept as the
// reference the assembly is compared with, record for record. Its options are settings of the
// transaction: `export.totp_issuer`, `export.times` and `export.password_hashes` (empty: off),
// besides the filters prepareSnapshot sets.

/** A setting of the export's transaction, NULL when empty. */
const setting = (name: string) => `nullif(current_setting('export.${name}'), '')`;

/** The users the export kept then: every filter a condition, an empty setting meaning "any". */
const USER_FILTER_SQL = `
      (${setting('created_after')} IS NULL OR u.created_at > ${setting('created_after')}::timestamptz)
  AND (${setting('updated_since')} IS NULL OR u.updated_at >= ${setting('updated_since')}::timestamptz)
  AND (${setting('disabled')} IS NULL OR u.is_disabled = ${setting('disabled')}::boolean)`;

function standardAttribute(name: (typeof STANDARD_ATTRIBUTES)[number]): string {
  if (name === 'email_verified') return `'${name}', ${verifiedClaimSql('email')}`;
  if (name === 'phone_number_verified') return `'${name}', ${verifiedClaimSql('phone_number')}`;
  return `'${name}', u.standard_attributes->'${name}'`;
}

/** A timestamp as the service writes them: RFC 3339 in UTC with microseconds. */
const utcTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * A stored password hash as the import takes it back: `{type, password_hash}` (password-formats.ts),
 * and `expire_after` when it has one.
 */
const passwordSql = (a: string) => `json_build_object(
    'type', CASE WHEN ${a}.password_hash LIKE '$2%' THEN 'bcrypt'
                 ELSE replace(split_part(${a}.password_hash, '$', 2), '-', '_') END,
    'password_hash', ${a}.password_hash, 'expire_after', ${utcTime(`${a}.expire_after`)})`;
const WITH_PASSWORD_HASHES = `${setting('password_hashes')} IS NOT NULL`;

/**
 * One user's full export record as JSON, assembled by one statement in creation order (the
 * keyset (created_at, id) of index users_created_at_id): standard attributes, roles, groups,
 * disabled, account validity, identities, second factors, custom attributes. Missing and null
 * members are dropped (json_strip_nulls). TOTP URIs name the issuer set in `export.totp_issuer` for
 * the session. The service keeps no biometrics or passkeys, so their counts are 0. `created_at`,
 * `updated_at` and `last_login_at` are there only when `export.times` is set (TIME_POINTERS); `password` and
 * `mfa.password` only when `export.password_hashes` is (include_password_hashes). `filtered`: the
 * export has filters; without, the statement has no condition, which the planner estimates well.
 */
export function jsonRecordsSql({ filtered }: { filtered: boolean }): string {
  return `
SELECT json_strip_nulls(json_build_object(
  'sub', u.id,
  'created_at', CASE WHEN ${setting('times')} IS NOT NULL THEN ${utcTime('u.created_at')} END,
  'updated_at', CASE WHEN ${setting('times')} IS NOT NULL THEN ${utcTime('u.updated_at')} END,
  'last_login_at', CASE WHEN ${setting('times')} IS NOT NULL THEN ${utcTime('u.last_login_at')} END,
  ${STANDARD_ATTRIBUTES.map(standardAttribute).join(',\n  ')},
  'roles', (SELECT coalesce(json_agg(r.key ORDER BY r.key), '[]')
              FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id),
  'groups', (SELECT coalesce(json_agg(g.key ORDER BY g.key), '[]')
               FROM user_groups ug JOIN groups g ON g.id = ug.group_id WHERE ug.user_id = u.id),
  'disabled', u.is_disabled,
  'account_valid_from', ${utcTime('u.account_valid_from')},
  'account_valid_until', ${utcTime('u.account_valid_until')},
  'password', CASE WHEN ${WITH_PASSWORD_HASHES} THEN (SELECT ${passwordSql('a')} FROM authenticators a
      WHERE a.user_id = u.id AND a.kind = 'primary' AND a.type = 'password') END,
  'identities', (SELECT coalesce(json_agg(CASE i.type
        WHEN 'login_id' THEN json_build_object('type', i.type, 'login_id', json_build_object(
          'key', i.login_id_key, 'original_value', i.original_login_id, 'type', i.login_id_type,
          'value', i.login_id), 'claims', i.claims || jsonb_strip_nulls(jsonb_build_object(
            'email', i.email, 'phone_number', i.phone_number, 'preferred_username', i.preferred_username)))
        ELSE json_build_object('type', i.type, 'oauth', json_build_object(
          'provider_alias', i.provider_alias, 'provider_type', i.provider_type,
          'provider_subject_id', i.provider_subject_id, 'user_profile', coalesce(i.profile, '{}')),
          'claims', i.claims)
        END ORDER BY i.created_at, i.id), '[]')
      FROM identities i WHERE i.user_id = u.id),
  'mfa', (SELECT json_build_object(
        'emails', coalesce(json_agg(a.email ORDER BY a.created_at, a.id)
                    FILTER (WHERE a.type = 'oob_otp_email'), '[]'),
        'phone_numbers', coalesce(json_agg(a.phone ORDER BY a.created_at, a.id)
                    FILTER (WHERE a.type = 'oob_otp_sms'), '[]'),
        'totps', coalesce(json_agg(json_build_object('secret', a.totp_secret, 'uri',
                    'otpauth://totp/' || uri_component(current_setting('export.totp_issuer')) || ':'
                    || uri_component(coalesce(u.standard_attributes->>'email',
                         u.standard_attributes->>'phone_number',
                         u.standard_attributes->>'preferred_username', u.id::text))
                    || '?algorithm=SHA1&digits=6&issuer=' || uri_component(current_setting('export.totp_issuer'))
                    || '&period=30&secret=' || a.totp_secret) ORDER BY a.created_at, a.id)
                    FILTER (WHERE a.type = 'totp'), '[]'),
        'password', CASE WHEN ${WITH_PASSWORD_HASHES} THEN
                    (array_agg(${passwordSql('a')}) FILTER (WHERE a.type = 'password'))[1] END)
      FROM authenticators a WHERE a.user_id = u.id AND a.kind = 'secondary'),
  'biometric_count', 0,
  'passkey_count', 0,
  'custom_attributes', u.custom_attributes
))
FROM users u
${filtered ? `WHERE ${USER_FILTER_SQL}` : ''}
ORDER BY u.created_at, u.id`;
}
