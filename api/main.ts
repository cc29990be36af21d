// `make api` / `make start`: serves the admin API (and with --with-workers the pipeline workers).
// Without DATABASE_URL it runs the embedded default.

import { once } from 'node:events';
import { createServer as createHttpsServer } from 'node:https';
import { deploymentAdminJwks, recordRunningService } from '../pipeline/development-keys.js';
import { requireFreePort } from '../pipeline/free-port.js';
import { loadConfigOrExit, runService } from '../pipeline/lifecycle.js';
import { createLogger } from '../pipeline/log.js';
import { serveOperatorPaths } from '../pipeline/operator/operator-http.js';
import { startPipelineParts } from '../pipeline/service-parts.js';
import { createApp } from './app.js';
import { serverTls } from './tls.js';

const config = loadConfigOrExit('api');
const log = createLogger(config.logLevel);

await runService(
  log,
  async ({ started }) => {
    // Said before anything starts: the port the API will listen on is free.
    await requireFreePort(config.port, 'PORT', 'the admin API');
    const parts = await startPipelineParts(config, log, started, {
      workers: process.argv.includes('--with-workers'),
    });
    const adminJwks = await deploymentAdminJwks(config);
    const app = createApp({
      config,
      db: parts.requests,
      blobs: parts.blobs,
      secrets: parts.secrets,
      taskCreated: parts.upkeep.wake,
      adminJwks,
      log,
      search: parts.searchOf,
      projects: parts.projects,
    });
    const server = app.listen(config.port);
    await once(server, 'listening');
    // Requests under way are answered (within the shutdown grace); idle connections close at once.
    started('admin API', async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      await closed;
    });
    if (config.apiOperatorPort > 0) {
      // Ready means able to serve lookups: Postgres. A Kafka or blob store outage must not take every
      // API process out of its load balancer (tasks are still accepted through the outbox).
      const operator = await serveOperatorPaths(config.apiOperatorPort, {
        pool: parts.requests,
        blobs: undefined,
      });
      started('health and metrics', async () => {
        operator.close();
        operator.closeAllConnections();
      });
    }
    const url = `http://localhost:${config.port}`;
    const tls = await serverTls(config);
    const httpsUrl = tls ? `https://localhost:${config.https.port}` : undefined;
    if (tls) {
      await requireFreePort(config.https.port, 'HTTPS_PORT', 'the admin API (HTTPS)');
      const secure = createHttpsServer({ cert: tls.cert, key: tls.key }, app.callback()).listen(
        config.https.port,
      );
      await once(secure, 'listening');
      started('admin API (HTTPS)', async () => {
        const closed = new Promise((resolve) => secure.close(resolve));
        secure.closeIdleConnections();
        await closed;
      });
    }
    if (!config.project.adminApi.jwks && !config.adminJwksFile) {
      started(
        'running-service record',
        await recordRunningService(config.dataDir, {
          public_origin: config.project.publicOrigin,
          url,
          ...(httpsUrl && tls ? { https_url: httpsUrl, ca_file: tls.certFile } : {}),
        }),
      );
    }
    log.info(
      { url, https_url: httpsUrl, graphql: `${url}/_api/admin/graphql`, embedded: !config.databaseUrl },
      'admin API listening',
    );
    process.stdout.write(
      `Admin API on ${url}${httpsUrl ? ` and ${httpsUrl}` : ''} (GraphQL: ${url}/_api/admin/graphql)\n`,
    );
  },
  { stopDeadlineMs: config.shutdownGraceSeconds * 1000 },
);
