import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import type { Pool, PoolClient } from '../../pipeline/db/pool.js';
import { prepareSnapshot, streamUserRows } from '../../pipeline/export/user-rows.js';
import { BENCH_PROJECT } from './bench-schema.js';
import { dropSchema, freshSchema } from './imports.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_export_filter';
const USERS = 500_000;
/** The users updated since SINCE: the last 1% of the update times. */
const SINCE_OFFSET_SECONDS = USERS * 0.99;

/**
 * The records statement of an export with `updated_since` keeping 1% of 500,000 users (their
 * update times spread apart from their creation order), read to its end, against a flat read of
 * the same users' rows (users and login ids, found by the same index): users/s each.
 */
export async function benchExportFilter(databaseUrl: string, log: (l: string) => void): Promise<BenchRow[]> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  try {
    await pool.query(
      `INSERT INTO users (id, project_id, created_at, updated_at, standard_attributes)
       SELECT gen_random_uuid(), $2, '2026-01-01'::timestamptz + n * interval '1 second',
              '2026-01-01'::timestamptz + ((n::bigint * 7919) % $1) * interval '1 second',
              jsonb_build_object('email', 'user' || n || '@example.com')
         FROM generate_series(1, $1) n`,
      [USERS, BENCH_PROJECT],
    );
    await pool.query(
      `INSERT INTO identities (project_id, id, user_id, type, login_id_key, login_id_type, login_id, original_login_id, email)
       SELECT project_id, gen_random_uuid(), id, 'login_id', 'email', 'email', standard_attributes->>'email',
              standard_attributes->>'email', standard_attributes->>'email' FROM users`,
    );
    await pool.query('VACUUM ANALYZE users, identities');
    const since = new Date(Date.parse('2026-01-01T00:00:00Z') + SINCE_OFFSET_SECONDS * 1000).toISOString();
    const best = async (read: () => Promise<number>) => {
      let fastest = Number.POSITIVE_INFINITY;
      for (let n = 0; n < 5; n++) fastest = Math.min(fastest, await read());
      return fastest;
    };
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM users WHERE project_id = $1 AND updated_at >= $2',
      [BENCH_PROJECT, since],
    );
    const users = rows[0]?.n ?? 0;
    const exportMs = await best(() =>
      inSnapshot(pool, async (client) => {
        const settings = { filters: { updated_since: since } };
        await prepareSnapshot(client, BENCH_PROJECT, settings);
        return timed(() => drain(streamUserRows(client, settings)));
      }),
    );
    const flatMs = await best(() =>
      inSnapshot(pool, (client) =>
        timed(async () => {
          const kept = `u.project_id = '${BENCH_PROJECT}' AND u.updated_at >= '${since}'`;
          await drain(client.query(copyTo(`COPY (SELECT u.* FROM users u WHERE ${kept}) TO STDOUT`)));
          const identities = `SELECT i.* FROM users u JOIN identities i ON i.user_id = u.id WHERE ${kept}`;
          await drain(client.query(copyTo(`COPY (${identities}) TO STDOUT`)));
        }),
      ),
    );
    log(
      `filtered export: ${users} users, records statement ${exportMs.toFixed(1)} ms, flat read ${flatMs.toFixed(1)} ms`,
    );
    return [
      row(
        'export.filtered_users_per_s',
        users / (exportMs / 1000),
        'users/s',
        'a flat read of the same 1% (users, login ids)',
        users / (flatMs / 1000),
        'as measured',
      ),
    ];
  } finally {
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

async function inSnapshot<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return await work(client);
  } finally {
    await client.query('COMMIT');
    client.release();
  }
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function drain(source: NodeJS.ReadableStream): Promise<void> {
  return pipeline(source, new Writable({ write: (_chunk, _encoding, done) => done() }));
}
