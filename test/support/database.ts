import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool, type Pool } from '../../pipeline/db/pool.js';
import { stopProcessesOf } from './leftover-processes.js';

/** The connection string of the test database with `schema` as its search path (for a service). */
export function schemaUrl(schema: string): string {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The hot standby of that Postgres (`postgres.sh standby`), as a schema's URL like schemaUrl. */
export function standbySchemaUrl(schema: string): string {
  const base = process.env.TEST_DATABASE_READ_URL;
  if (!base) throw new Error('TEST_DATABASE_READ_URL is not set');
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The real Postgres started by `make test`. */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  return url;
}

/** Connections of a test's own pool: its queries, and a facade without workers. */
const TEST_CONNECTIONS = 4;

/**
 * A migrated schema of its own for the calling `describe` block, dropped afterwards, so test files
 * never see each other's rows. Returns a getter (the pool exists once `before` has run) that also
 * names the schema, for processes started by the test. `connections`: the pool's size (a test that
 * runs workers in process sizes it as a service process does).
 */
export function useTestSchema(connections = TEST_CONNECTIONS): (() => Pool) & { readonly schema: string } {
  let pool: Pool | undefined;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  before(async () => {
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    pool = createPool({ connectionString: testDatabaseUrl(), schema, max: connections });
    await migrate(pool);
  });
  after(async () => {
    // A service process still on the schema would hold locks the drop waits for.
    await stopProcessesOf(schema);
    if (pool) await dropSchema(pool, schema);
    await pool?.end();
  });
  const get = () => {
    if (!pool) throw new Error('the test schema is not ready yet');
    return pool;
  };
  return Object.assign(get, { schema });
}

/**
 * Drops a test schema. A session that still holds a lock on one of its tables (a statement whose
 * client is gone, still running) would keep the drop waiting until the hook's timeout: the drop
 * gives up sooner and names the sessions that hold such locks.
 */
async function dropSchema(pool: Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(`SET lock_timeout = '30s'`);
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
  } catch (err) {
    if ((err as { code?: string }).code !== '55P03') throw err; // lock_not_available
    const { rows } = await client.query(
      `SELECT DISTINCT a.pid, a.state, a.query_start, left(a.query, 200) AS query
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND l.granted AND a.pid <> pg_backend_pid()`,
      [schema],
    );
    throw new Error(`schema ${schema} not dropped: its tables are locked by ${JSON.stringify(rows)}`);
  } finally {
    client.release();
  }
}
