import { randomUUID } from 'node:crypto';
import type { ProjectConfig } from '../../pipeline/config.js';
import type { Queryable } from '../../pipeline/db/pool.js';
import { normalizeEmail, normalizePhone, normalizeUsername } from '../../pipeline/identity/normalize.js';

/** A user to store for a test, in the shape of an import record plus OAuth connections. */
export interface FixtureUser {
  readonly email?: string;
  readonly preferred_username?: string;
  readonly phone_number?: string;
  readonly email_verified?: boolean;
  readonly phone_number_verified?: boolean;
  readonly standard?: Record<string, unknown>;
  readonly custom?: Record<string, unknown>;
  readonly disabled?: boolean;
  readonly roles?: readonly string[];
  readonly groups?: readonly string[];
  readonly oauth?: readonly FixtureOAuth[];
  readonly createdAt?: string;
}

export interface FixtureOAuth {
  readonly alias: string;
  readonly type: string;
  readonly subjectId: string;
  readonly claims?: Record<string, unknown>;
}

function must(result: { ok: true; value: string } | { ok: false; problem: string }): string {
  if (!result.ok) throw new Error(`bad fixture: ${result.problem}`);
  return result.value;
}

/**
 * Stores a user with its login ids, OAuth connections, verified claims, roles and groups through
 * plain SQL, normalizing as the service does. Until import exists, this is how tests make users.
 */
export async function createUser(db: Queryable, project: ProjectConfig, user: FixtureUser): Promise<string> {
  const id = randomUUID();
  const cs = (key: 'email' | 'username') => project.loginIdKeys.get(key)?.caseSensitive ?? false;
  const email = user.email === undefined ? undefined : must(normalizeEmail(user.email, cs('email')));
  const username =
    user.preferred_username === undefined
      ? undefined
      : must(normalizeUsername(user.preferred_username, cs('username')));
  const phone = user.phone_number === undefined ? undefined : must(normalizePhone(user.phone_number));
  const standard = {
    ...user.standard,
    ...(email ? { email } : {}),
    ...(username ? { preferred_username: username } : {}),
    ...(phone ? { phone_number: phone } : {}),
  };
  await db.query(
    `INSERT INTO users (id, created_at, updated_at, is_disabled, standard_attributes, custom_attributes, project_id)
     VALUES ($1, coalesce($2::timestamptz, clock_timestamp()), coalesce($2::timestamptz, clock_timestamp()), $3, $4, $5, $6)`,
    [id, user.createdAt ?? null, user.disabled ?? false, standard, user.custom ?? {}, project.id],
  );
  const loginIds: [string, string | undefined, string | undefined, string][] = [
    ['email', email, user.email, 'email'],
    ['username', username, user.preferred_username, 'preferred_username'],
    ['phone', phone, user.phone_number, 'phone_number'],
  ];
  for (const [key, value, original, attribute] of loginIds) {
    if (value === undefined || original === undefined) continue;
    await db.query(
      `INSERT INTO identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id, ${attribute},
                               project_id)
       VALUES ($1, $2, 'login_id', $3, $3, $4, $5, $4, $6)`,
      [randomUUID(), id, key, value, original, project.id],
    );
  }
  for (const o of user.oauth ?? []) {
    const claims = o.claims ?? {};
    const claimEmail =
      typeof claims.email === 'string' ? must(normalizeEmail(claims.email, cs('email'))) : null;
    const claimPhone =
      typeof claims.phone_number === 'string' ? must(normalizePhone(claims.phone_number)) : null;
    const claimUsername =
      typeof claims.preferred_username === 'string'
        ? must(normalizeUsername(claims.preferred_username, cs('username')))
        : null;
    await db.query(
      `INSERT INTO identities (id, user_id, type, provider_alias, provider_type, provider_subject_id, profile, claims,
                               email, phone_number, preferred_username, project_id)
       VALUES ($1, $2, 'oauth', $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        randomUUID(),
        id,
        o.alias,
        o.type,
        o.subjectId,
        { id: o.subjectId, ...claims },
        claims,
        claimEmail,
        claimPhone,
        claimUsername,
        project.id,
      ],
    );
  }
  const verified: [string, string | undefined, boolean | undefined][] = [
    ['email', email, user.email_verified],
    ['phone_number', phone, user.phone_number_verified],
  ];
  for (const [name, value, flag] of verified) {
    if (value === undefined || !flag) continue;
    await db.query('INSERT INTO verified_claims (id, user_id, name, value) VALUES ($1, $2, $3, $4)', [
      randomUUID(),
      id,
      name,
      value,
    ]);
  }
  for (const [table, link, column, keys] of [
    ['roles', 'user_roles', 'role_id', user.roles ?? []],
    ['groups', 'user_groups', 'group_id', user.groups ?? []],
  ] as const) {
    for (const key of keys) {
      await db.query(
        `INSERT INTO ${table} (id, project_id, key) VALUES ($1, $2, $3) ON CONFLICT (project_id, key) DO NOTHING`,
        [randomUUID(), project.id, key],
      );
      await db.query(
        `INSERT INTO ${link} (user_id, ${column}) SELECT $1, id FROM ${table} WHERE project_id = $2 AND key = $3`,
        [id, project.id, key],
      );
    }
  }
  return id;
}

/**
 * Stores `count` bare users straight in SQL, fast (150,000 in a second or two): each with the email
 * `<prefix><n>@<domain>` and, when `nameLength` is given, a name of that many characters, created
 * 1 ms apart from `since`. For the exports that must still be running when a test acts on them.
 */
export async function insertGeneratedUsers(
  db: Queryable,
  count: number,
  { prefix = 'user', domain = 'example.com', nameLength = 0, since = '2026-01-01', project = 'default' } = {},
): Promise<void> {
  await db.query(
    `INSERT INTO users (id, created_at, standard_attributes, project_id)
     SELECT gen_random_uuid(), $5::timestamptz + n * interval '1 ms',
            jsonb_strip_nulls(jsonb_build_object('email', $2 || n || '@' || $3,
                                                 'name', nullif(repeat('x', $4), ''))), $6
       FROM generate_series(1, $1) n`,
    [count, prefix, domain, nameLength, since, project],
  );
}

/** The stored primary password hash of the user with this email ('' when it has none). */
export async function passwordHashOf(db: Queryable, email: string): Promise<string> {
  const { rows } = await db.query<{ password_hash: string }>(
    `SELECT a.password_hash FROM authenticators a JOIN users u ON u.id = a.user_id
      WHERE a.kind = 'primary' AND a.type = 'password' AND u.standard_attributes->>'email' = $1`,
    [email],
  );
  return rows[0]?.password_hash ?? '';
}
