// `make api` / `make start`: serves the admin API (and with --with-workers the pipeline workers).
// Without DATABASE_URL it runs the embedded default.

import { once } from 'node:events';
import { loadConfigOrExit, runService } from '../pipeline/lifecycle.js';
import { createLogger } from '../pipeline/log.js';
import { startPipelineParts } from '../pipeline/service-parts.js';
import { recordRunningService, resolveAdminJwks } from './admin-keys.js';
import { createApp } from './app.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel);

await runService(log, async ({ started }) => {
  const parts = await startPipelineParts(config, log, started, {
    workers: process.argv.includes('--with-workers'),
  });
  const adminJwks = await resolveAdminJwks(config);
  const app = createApp({
    config,
    db: parts.pool,
    blobs: parts.blobs,
    secrets: parts.secrets,
    taskCreated: parts.upkeep.wake,
    adminJwks,
    log,
  });
  const server = app.listen(config.port);
  await once(server, 'listening');
  started('admin API', async () => {
    server.close();
    server.closeAllConnections();
  });
  if (!config.project.adminApi.jwks && !config.adminJwksFile) {
    started(
      'running-service record',
      await recordRunningService(config.dataDir, config.project.publicOrigin),
    );
  }
  const url = `http://localhost:${config.port}`;
  log.info(
    { url, graphql: `${url}/_api/admin/graphql`, embedded: !config.databaseUrl },
    'admin API listening',
  );
  process.stdout.write(`Admin API on ${url} (GraphQL: ${url}/_api/admin/graphql)\n`);
});
