import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool, type Pool } from '../../pipeline/db/pool.js';
import { BENCH_PROJECT, copyRows, IDENTITY_COPY_TARGET } from './bench-schema.js';

// Versioned: a change to the generated data must not reuse an older schema of the same size.
const VERSION = 'v2';
const N = '\\N';
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const ROLES = Array.from({ length: 10 }, (_, k) => `role_${k}`);
const GROUPS = Array.from({ length: 5 }, (_, k) => `group_${k}`);
const roleId = (k: number) => `00000000-0000-4000-9000-${k.toString(16).padStart(12, '0')}`;
const groupId = (k: number) => `00000000-0000-4000-a000-${k.toString(16).padStart(12, '0')}`;
const userId = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/** The schema holding the export data set of `count` users. */
export const exportSchema = (count: number) => `bench_export_${VERSION}_${count}`;

/**
 * The export's data set of issue 16, as a project looks: every user with a password, an email and
 * a username login id (the email verified), two roles, a group and two custom attributes; one in
 * ten with an OAuth connection, one in ten with a TOTP and an MFA email. Loaded with COPY into a
 * schema of its own, reused when a previous run left it complete.
 */
export async function exportUsers(url: string, count: number, log: (line: string) => void): Promise<Pool> {
  const schema = exportSchema(count);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await admin.end();
  const pool = createPool({ connectionString: url, schema, max: 8 });
  await migrate(pool);
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM users WHERE custom_attributes ? 'complete'",
  );
  if (Number(rows[0]?.n) === 1) {
    log(`reusing ${count} export users in schema ${schema}`);
    return pool;
  }
  log(`generating ${count} export users with COPY ...`);
  const started = Date.now();
  await pool.query('TRUNCATE users, roles, groups CASCADE');
  const client = await pool.connect();
  try {
    await copyRows(
      client,
      'roles (project_id, id, key, name)',
      ROLES.map((key, k) => `${BENCH_PROJECT}\t${roleId(k)}\t${key}\t${key}\n`),
    );
    await copyRows(
      client,
      'groups (project_id, id, key, name)',
      GROUPS.map((key, k) => `${BENCH_PROJECT}\t${groupId(k)}\t${key}\t${key}\n`),
    );
    await copyRows(
      client,
      'users (project_id, id, created_at, updated_at, standard_attributes, custom_attributes)',
      userRows(count),
    );
    await copyRows(client, IDENTITY_COPY_TARGET, identityRows(count));
    await copyRows(
      client,
      'authenticators (id, user_id, kind, type, password_hash, email, totp_secret)',
      authenticatorRows(count),
    );
    await copyRows(client, 'verified_claims (id, user_id, name, value)', verifiedRows(count));
    await copyRows(
      client,
      'user_roles (user_id, role_id)',
      memberRows(count, (i) => [i % 10, (i + 3) % 10].map(roleId)),
    );
    await copyRows(
      client,
      'user_groups (user_id, group_id)',
      memberRows(count, (i) => [groupId(i % 5)]),
    );
    // The last user marks the set complete: a run cut short while generating is not reused.
    await client.query(
      `UPDATE users SET custom_attributes = custom_attributes || '{"complete": true}' WHERE id = $1`,
      [userId(count - 1)],
    );
    await client.query('VACUUM (ANALYZE)');
  } finally {
    client.release();
  }
  log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return pool;
}

function* userRows(count: number): Generator<string> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < count; i++) {
    const at = new Date(base + i * 7).toISOString();
    const standard = JSON.stringify({
      email: `user${i}@example.com`,
      preferred_username: `user${i}`,
      given_name: `Given${i}`,
      family_name: `Family${i}`,
    });
    const custom = JSON.stringify({ member_id: `M-${i}`, tier: i % 3 === 0 ? 'gold' : 'basic' });
    yield `${BENCH_PROJECT}\t${userId(i)}\t${at}\t${at}\t${standard}\t${custom}\n`;
  }
}

function* identityRows(count: number): Generator<string> {
  for (let i = 0; i < count; i++) {
    const user = userId(i);
    const email = `user${i}@example.com`;
    const username = `user${i}`;
    yield `${BENCH_PROJECT}\t${randomUUID()}\t${user}\tlogin_id\temail\temail\t${email}\t${email}\t${N}\t${N}\t${N}\t${N}\t{}\t${email}\t${N}\t${N}\n`;
    yield `${BENCH_PROJECT}\t${randomUUID()}\t${user}\tlogin_id\tusername\tusername\t${username}\t${username}\t${N}\t${N}\t${N}\t${N}\t{}\t${N}\t${N}\t${username}\n`;
    if (i % 10 === 0) {
      const claims = JSON.stringify({ email: `oauth${i}@example.com` });
      const profile = JSON.stringify({ id: `g${i}`, email: `oauth${i}@example.com` });
      yield `${BENCH_PROJECT}\t${randomUUID()}\t${user}\toauth\t${N}\t${N}\t${N}\t${N}\tgoogle\tgoogle\tg${i}\t${profile}\t${claims}\toauth${i}@example.com\t${N}\t${N}\n`;
    }
  }
}

function* authenticatorRows(count: number): Generator<string> {
  for (let i = 0; i < count; i++) {
    const user = userId(i);
    yield `${randomUUID()}\t${user}\tprimary\tpassword\t${HASH}\t${N}\t${N}\n`;
    if (i % 10 === 5) {
      yield `${randomUUID()}\t${user}\tsecondary\ttotp\t${N}\t${N}\tJBSWY3DPEHPK3PXP\n`;
      yield `${randomUUID()}\t${user}\tsecondary\toob_otp_email\t${N}\tmfa${i}@example.com\t${N}\n`;
    }
  }
}

function* verifiedRows(count: number): Generator<string> {
  for (let i = 0; i < count; i++) yield `${randomUUID()}\t${userId(i)}\temail\tuser${i}@example.com\n`;
}

function* memberRows(count: number, ids: (i: number) => string[]): Generator<string> {
  for (let i = 0; i < count; i++) for (const id of ids(i)) yield `${userId(i)}\t${id}\n`;
}
