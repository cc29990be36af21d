import type { ServiceConfig } from '../config.js';
import { sqlState } from '../errors.js';
import type { Logger } from '../log.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres.js';
import { alignSearchTextIndex, migrate } from './migrate.js';
import { createPool, type Pool } from './pool.js';

/** An open, migrated database: the configured Postgres, or the embedded one when none is. */
export interface Database {
  readonly pool: Pool;
  readonly connectionString: string;
  close(): Promise<void>;
}

/**
 * Connects (starting the embedded Postgres if DATABASE_URL is unset) and, on the embedded default
 * or when `migrate` (MIGRATE_ON_START) says so, applies the migrations. Warns
 * when the pool, with the `otherConnections` the process opens besides it, may open more
 * connections than the server lets ordinary users have: the last ones would be refused under
 * load, and the tasks waiting on them would fail.
 */
export async function openDatabase(
  config: ServiceConfig,
  log: Logger,
  poolSize = 10,
  otherConnections = 0,
  { migrate: migrateNow = config.migrateOnStart || !config.databaseUrl } = {},
): Promise<Database> {
  let connectionString = config.databaseUrl;
  let embedded: EmbeddedDatabase | undefined;
  if (!connectionString) {
    embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
    connectionString = embedded.connectionString;
  }
  // A broken connection is dropped and a new one opened for the next query.
  const pool = createPool({
    connectionString,
    max: poolSize,
    keepaliveSeconds: config.databaseKeepaliveSeconds,
    statementTimeoutMs: config.databaseTimeouts.statementMs,
    lockTimeoutMs: config.databaseTimeouts.lockMs,
    idleInTransactionTimeoutMs: config.databaseTimeouts.idleInTransactionMs,
    onConnectionError: (err) =>
      log.warn({ code: sqlState(err), message: err.message }, 'database connection lost'),
  });
  try {
    if (migrateNow) {
      const applied = await migrate(pool, config.project.id);
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
      await alignSearchTextIndex(pool, config.search.clickhouse ? 'clickhouse' : 'postgres');
    }
    const allowed = await allowedConnections(pool);
    if (poolSize + otherConnections > allowed)
      log.warn(
        { pool_size: poolSize + otherConnections, allowed_connections: allowed },
        'the pool may open more connections than Postgres allows (max_connections)',
      );
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw err;
  }
  return {
    pool,
    connectionString,
    close: async () => {
      await pool.end();
      await embedded?.stop();
    },
  };
}

/** Connections the server allows users other than superusers (all processes together). */
async function allowedConnections(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ allowed: number }>(
    `SELECT current_setting('max_connections')::int
              - current_setting('superuser_reserved_connections')::int AS allowed`,
  );
  return rows[0]?.allowed ?? Number.POSITIVE_INFINITY;
}

/**
 * The pool of the standby exports read (DATABASE_READ_URL), for `concurrency` export slots: each
 * holds a snapshot's connection and a part's. Undefined without a standby. It is opened lazily,
 * so that a standby down at start only sends the exports to the primary (read-source.ts).
 */
export function openReadPool(config: ServiceConfig, log: Logger, concurrency: number): Pool | undefined {
  if (!config.databaseReadUrl) return undefined;
  return createPool({
    connectionString: config.databaseReadUrl,
    max: 2 * concurrency,
    keepaliveSeconds: config.databaseKeepaliveSeconds,
    statementTimeoutMs: config.databaseTimeouts.statementMs,
    idleInTransactionTimeoutMs: config.databaseTimeouts.idleInTransactionMs,
    onConnectionError: (err) =>
      log.warn({ code: sqlState(err), message: err.message }, 'standby connection lost'),
  });
}
