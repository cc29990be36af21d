// `make api` / `make start`: serves the admin API (and with --with-workers the pipeline workers).
// Without DATABASE_URL it runs the embedded default.

import { once } from 'node:events';
import { openExportStorage } from '../pipeline/blob/open-blob-storage.js';
import { createBus } from '../pipeline/bus/create-bus.js';
import { loadConfig } from '../pipeline/config.js';
import { openDatabase } from '../pipeline/db/open-database.js';
import { runService } from '../pipeline/lifecycle.js';
import { createLogger } from '../pipeline/log.js';
import { startWorkers } from '../pipeline/workers.js';
import { resolveAdminJwks } from './admin-keys.js';
import { createApp } from './app.js';

const config = loadConfig();
const log = createLogger(config.logLevel);

await runService(log, async ({ started }) => {
  const db = await openDatabase(config, log);
  started('database', () => db.close());
  const storage = await openExportStorage(config, log);
  started('export storage', () => storage.close());
  const adminJwks = await resolveAdminJwks(config);
  const bus = createBus(config, db.pool, log);
  started('task bus', () => bus.close());
  // `make start` runs the pipeline workers in this process too; `make api` runs the facade alone.
  if (process.argv.includes('--with-workers')) {
    const workers = await startWorkers(config, db.pool, bus, storage.blobs, log);
    started('pipeline workers', () => workers.stop());
  }

  const app = createApp({ config, db: db.pool, bus, blobs: storage.blobs, adminJwks, log });
  const server = app.listen(config.port);
  await once(server, 'listening');
  started('admin API', async () => {
    server.close();
    server.closeAllConnections();
  });
  const url = `http://localhost:${config.port}`;
  log.info(
    { url, graphql: `${url}/_api/admin/graphql`, embedded: !config.databaseUrl },
    'admin API listening',
  );
  process.stdout.write(`Admin API on ${url} (GraphQL: ${url}/_api/admin/graphql)\n`);
});
