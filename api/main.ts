// `make api` / `make start`: serves the admin API (and with --with-workers the pipeline workers).
// Without DATABASE_URL it runs the embedded default.

import { openExportStorage } from '../pipeline/blob/open-blob-storage.js';
import { createBus } from '../pipeline/bus/create-bus.js';
import { loadConfig } from '../pipeline/config.js';
import { openDatabase } from '../pipeline/db/open-database.js';
import { createLogger } from '../pipeline/log.js';
import { startWorkers } from '../pipeline/workers.js';
import { resolveAdminJwks } from './admin-keys.js';
import { createApp } from './app.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const db = await openDatabase(config, log);
const storage = await openExportStorage(config, log);
const adminJwks = await resolveAdminJwks(config);
const bus = createBus(config, db.pool, log);
const app = createApp({ config, db: db.pool, bus, blobs: storage.blobs, adminJwks, log });
// `make start` runs the pipeline workers in this process too; `make api` runs the facade alone.
const workers = process.argv.includes('--with-workers')
  ? await startWorkers(config, db.pool, bus, storage.blobs, log)
  : undefined;

const server = app.listen(config.port, () => {
  const url = `http://localhost:${config.port}`;
  log.info(
    { url, graphql: `${url}/_api/admin/graphql`, embedded: !config.databaseUrl },
    'admin API listening',
  );
  process.stdout.write(`Admin API on ${url} (GraphQL: ${url}/_api/admin/graphql)\n`);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  server.close();
  server.closeAllConnections();
  if (workers) await workers.stop();
  else await bus.close();
  await storage.close();
  await db.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
