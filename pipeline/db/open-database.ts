import type { ServiceConfig } from '../config.js';
import type { Logger } from '../log.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres.js';
import { migrate } from './migrate.js';
import { createPool, type Pool, sqlState } from './pool.js';

/** An open, migrated database: the configured Postgres, or the embedded one when none is. */
export interface Database {
  readonly pool: Pool;
  readonly connectionString: string;
  close(): Promise<void>;
}

/** Connects (starting the embedded Postgres if DATABASE_URL is unset) and applies migrations. */
export async function openDatabase(config: ServiceConfig, log: Logger, poolSize = 10): Promise<Database> {
  let connectionString = config.databaseUrl;
  let embedded: EmbeddedDatabase | undefined;
  if (!connectionString) {
    embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
    connectionString = embedded.connectionString;
  }
  const pool = createPool({ connectionString, max: poolSize });
  // A connection that dies while idle (a server restart or failover, an administrator's
  // pg_terminate_backend) is an 'error' event on the pool, which would otherwise end the process.
  // The pool drops it and opens a new one for the next query.
  pool.on('error', (err) =>
    log.warn({ code: sqlState(err), message: err.message }, 'idle database connection lost'),
  );
  try {
    const applied = await migrate(pool);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
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
