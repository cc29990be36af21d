// `make api` / `make start`: serves the admin API. Without DATABASE_URL it runs the embedded default.
import { loadConfig } from '../pipeline/config.js';
import { openDatabase } from '../pipeline/db/open-database.js';
import { createLogger } from '../pipeline/log.js';
import { resolveAdminJwks } from './admin-keys.js';
import { createApp } from './app.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const db = await openDatabase(config, log);
const adminJwks = await resolveAdminJwks(config);
const app = createApp({ config, db: db.pool, adminJwks, log });

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
  await db.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
