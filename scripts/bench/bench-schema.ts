import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool, type Pool } from '../../pipeline/db/pool.js';

// Versioned: a change to the generated data must not reuse an older schema of the same size.
export const BENCH_SCHEMA = 'bench_lookups_v3';

/** The project the bench's users belong to: the embedded default's, which its services serve. */
export const BENCH_PROJECT = 'default';

/** The identity columns the bench's generated rows give, in their order. */
export const IDENTITY_COPY_TARGET = `identities (project_id, id, user_id, type, login_id_key, login_id_type, login_id,
  original_login_id, provider_alias, provider_type, provider_subject_id, profile, claims,
  email, phone_number, preferred_username)`;

/** Deterministic values of generated user number i, so the load can ask for any of them. */
export const generated = {
  id: (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
  email: (i: number) => `user${i}@example.com`,
  username: (i: number) => `user${i}`,
  phone: (i: number) => `+14152${String(i).padStart(6, '0')}`,
  /** Every tenth user also has a google connection. */
  oauthSubject: (i: number) => (i % 10 === 0 ? `g${i}` : undefined),
};

/** Where generated users go: a schema, and the project of user number i. */
export interface GeneratedUsers {
  readonly schema: string;
  readonly projectOf: (i: number) => string;
}

const ONE_PROJECT: GeneratedUsers = { schema: BENCH_SCHEMA, projectOf: () => BENCH_PROJECT };

/**
 * A schema with `count` generated users (email, username and phone login ids each; every tenth
 * with an OAuth connection), loaded with COPY. Reused when a previous run left the same count.
 */
export async function benchUsers(
  url: string,
  count: number,
  log: (line: string) => void,
  { schema, projectOf }: GeneratedUsers = ONE_PROJECT,
): Promise<Pool> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await admin.end();
  const pool = createPool({ connectionString: url, schema, max: 40 });
  await migrate(pool);
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM users');
  if (Number(rows[0]?.n) === count) {
    log(`reusing ${count} generated users in schema ${schema}`);
    return pool;
  }
  log(`generating ${count} users with COPY ...`);
  const started = Date.now();
  await pool.query('TRUNCATE users CASCADE');
  const client = await pool.connect();
  try {
    await copyRows(
      client,
      'users (project_id, id, created_at, updated_at, standard_attributes)',
      userRows(count, projectOf),
    );
    await copyRows(client, IDENTITY_COPY_TARGET, identityRows(count, projectOf));
    // Vacuum now, so that autovacuum does not wake up on these fresh tables in the middle of a measurement.
    await client.query('VACUUM (ANALYZE) users, identities');
  } finally {
    client.release();
  }
  log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return pool;
}

/** COPYs generated text rows into `target` (a table and its columns). */
export async function copyRows(client: pg.PoolClient, target: string, rows: Iterable<string>): Promise<void> {
  await pipeline(Readable.from(batched(rows)), client.query(copyFrom(`COPY ${target} FROM STDIN`)));
}

/** Joins COPY rows into chunks of about 256 KB: one write per row would dominate the load. */
export function* batched(rows: Iterable<string>): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += row;
    if (chunk.length > 256 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

function* userRows(count: number, projectOf: (i: number) => string): Generator<string> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < count; i++) {
    const at = new Date(base + i).toISOString();
    const attributes = JSON.stringify({
      email: generated.email(i),
      preferred_username: generated.username(i),
      phone_number: generated.phone(i),
      given_name: `Given${i}`,
      family_name: `Family${i}`,
    });
    yield `${projectOf(i)}\t${generated.id(i)}\t${at}\t${at}\t${attributes}\n`;
  }
}

function* identityRows(count: number, projectOf: (i: number) => string): Generator<string> {
  const N = '\\N';
  for (let i = 0; i < count; i++) {
    const project = projectOf(i);
    const user = generated.id(i);
    const email = generated.email(i);
    const username = generated.username(i);
    const phone = generated.phone(i);
    yield `${project}\t${randomUUID()}\t${user}\tlogin_id\temail\temail\t${email}\t${email}\t${N}\t${N}\t${N}\t${N}\t{}\t${email}\t${N}\t${N}\n`;
    yield `${project}\t${randomUUID()}\t${user}\tlogin_id\tusername\tusername\t${username}\t${username}\t${N}\t${N}\t${N}\t${N}\t{}\t${N}\t${N}\t${username}\n`;
    yield `${project}\t${randomUUID()}\t${user}\tlogin_id\tphone\tphone\t${phone}\t${phone}\t${N}\t${N}\t${N}\t${N}\t{}\t${N}\t${phone}\t${N}\n`;
    const subject = generated.oauthSubject(i);
    if (subject) {
      const claims = JSON.stringify({ email: `oauth${i}@example.com` });
      const profile = JSON.stringify({ id: subject, email: `oauth${i}@example.com` });
      yield `${project}\t${randomUUID()}\t${user}\toauth\t${N}\t${N}\t${N}\t${N}\tgoogle\tgoogle\t${subject}\t${profile}\t${claims}\toauth${i}@example.com\t${N}\t${N}\n`;
    }
  }
}
