import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrate } from '../../pipeline/db/migrate.js';
import { emptySchema } from './imports.js';
import { schemaUrl } from './processes.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_live_migration_v1';
/** How long the probes run without the migration, for the baseline. */
const BASELINE_MS = 20_000;
/** A probe's pause between rounds. */
const PROBE_EVERY_MS = 20;

/**
 * `tenancy.live_migration_max_wait_ms`: a deployment of the version before projects (migrations
 * through 023) with `users` users, each with an email login id and an OAuth connection, migrated
 * while a writer of that version keeps looking users up and inserting them: the longest any of its
 * rounds took during the migration, against the longest over the same rounds without it. The
 * migration's own time is printed.
 */
export async function benchLiveMigration(
  databaseUrl: string,
  users: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const pool = await emptySchema(databaseUrl, SCHEMA);
  const url = schemaUrl(databaseUrl, SCHEMA);
  try {
    await migrate(pool, 'default', { through: '023' });
    const started = Date.now();
    await pool.query(
      `INSERT INTO users (id, created_at)
       SELECT md5(n::text)::uuid, now() - n * interval '1 second' FROM generate_series(1, $1) n`,
      [users],
    );
    await pool.query(
      `INSERT INTO identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id, email)
       SELECT gen_random_uuid(), id, 'login_id', 'email', 'email', id || '@live.test', id || '@live.test', id || '@live.test'
         FROM users`,
    );
    await pool.query(
      `INSERT INTO identities (id, user_id, type, provider_alias, provider_type, provider_subject_id)
       SELECT gen_random_uuid(), id, 'oauth', 'google', 'google', id::text FROM users`,
    );
    await pool.query('ANALYZE users; ANALYZE identities');
    log(
      `live migration: ${users} users of the version before made in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    const baseline = await withProbe(url, () => sleep(BASELINE_MS));
    let seconds = 0;
    const during = await withProbe(url, async () => {
      const t0 = Date.now();
      const applied = await migrate(pool, 'default');
      seconds = (Date.now() - t0) / 1000;
      log(`live migration: ${applied.join(', ')} applied in ${seconds.toFixed(1)} s`);
    });
    log(
      `live migration: longest round of the old version's writer ${during.ms.toFixed(0)} ms during it (ended ${during.endedAt.toISOString()}), ${baseline.ms.toFixed(0)} ms without`,
    );
    // Each step's record is written as it ends: the step under way when the longest round ended.
    const { rows } = await pool.query<{ version: string; applied_at: Date }>(
      `SELECT version, applied_at FROM schema_migrations WHERE version >= '024' ORDER BY applied_at`,
    );
    for (const r of rows) log(`live migration: ${r.applied_at.toISOString()} ${r.version} done`);
    return [
      row(
        'tenancy.live_migration_max_wait_ms',
        during.ms,
        'ms',
        `the same lookups and inserts for ${BASELINE_MS / 1000} s without the migration`,
        baseline.ms,
        `the migration (${seconds.toFixed(0)} s) blocks no writer`,
      ),
    ];
  } finally {
    await pool.end();
  }
}

/** A probe's longest round: how long, and when it ended. */
interface Longest {
  readonly ms: number;
  readonly endedAt: Date;
}

/**
 * Runs `work` while a writer of the version before projects looks a user up by login id and
 * inserts a user and its login id (without a project: the column's default gives it) in rounds;
 * the longest round, in ms.
 */
async function withProbe(url: string, work: () => Promise<void>): Promise<Longest> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let stop = false;
  let longest: Longest = { ms: 0, endedAt: new Date(0) };
  const probing = (async () => {
    for (let n = 0; !stop; n++) {
      const t0 = performance.now();
      await client.query(
        `SELECT user_id FROM identities WHERE type = 'login_id' AND login_id_key = 'email' AND login_id = $1`,
        [`${n}@live.test`],
      );
      await client.query(
        `WITH u AS (INSERT INTO users (id) VALUES (gen_random_uuid()) RETURNING id)
         INSERT INTO identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id)
         SELECT gen_random_uuid(), id, 'login_id', 'email', 'email', id || '@probe.test', id || '@probe.test' FROM u`,
      );
      const ms = performance.now() - t0;
      if (ms > longest.ms) longest = { ms, endedAt: new Date() };
      await sleep(PROBE_EVERY_MS);
    }
  })();
  try {
    await work();
  } finally {
    stop = true;
    await probing;
    await client.end();
  }
  return longest;
}
