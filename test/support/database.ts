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
    await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool?.end();
  });
  const get = () => {
    if (!pool) throw new Error('the test schema is not ready yet');
    return pool;
  };
  return Object.assign(get, { schema });
}
