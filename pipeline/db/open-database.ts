import type { ServiceConfig } from '../config.js';
import { sqlState } from '../errors.js';
import type { Logger } from '../log.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres.js';
import { migrate } from './migrate.js';
import { createPool, type Pool } from './pool.js';

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
  // A broken connection is dropped and a new one opened for the next query.
  const pool = createPool({
    connectionString,
    max: poolSize,
    onConnectionError: (err) =>
      log.warn({ code: sqlState(err), message: err.message }, 'database connection lost'),
  });
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
