import Router from '@koa/router';
import type { JSONWebKeySet } from 'jose';
import Koa from 'koa';
import type { BlobStorage } from '../pipeline/blob/blob-storage.js';
import type { ServiceConfig } from '../pipeline/config.js';
import type { Pool } from '../pipeline/db/pool.js';
import type { Logger } from '../pipeline/log.js';
import { postgresUserSearch } from '../pipeline/search/postgres-user-search.js';
import type { UserSearchIndex } from '../pipeline/search/user-search.js';
import { exportService } from '../pipeline/services/export-service.js';
import { importService } from '../pipeline/services/import-service.js';
import { webhookService } from '../pipeline/services/webhook-service.js';
import type { SecretBox } from '../pipeline/tasks/task-secrets.js';
import { openApiDocument } from '../schemas/openapi.js';
import { requireAdminJwt, requireProjectHost } from './auth.js';
import { consoleRoutes } from './console/serve-console.js';
import { errorEnvelope } from './errors.js';
import { graphqlHandler } from './graphql/handler.js';
import { requestLog } from './request-log.js';
import { exportRoutes } from './routes/export.js';
import { importRoutes } from './routes/import.js';
import { webhookRoutes } from './routes/webhooks.js';

/** What the facade stands on; built once by main.ts (or a test). */
export interface AppDependencies {
  readonly config: ServiceConfig;
  readonly db: Pool;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  readonly secrets: SecretBox;
  /** Tells the outbox relay that a task was recorded (its message then goes out at once). */
  readonly taskCreated: () => void;
  readonly adminJwks: JSONWebKeySet;
  readonly log: Logger;
  /** The index behind `users(searchKeyword)`: ClickHouse when configured; Postgres by default. */
  readonly search?: UserSearchIndex | undefined;
}

/**
 * The facade's middleware chain: request log, the error envelope, then per admin route the Host
 * check and the admin JWT before anything reads the body.
 */
export function createApp({
  config,
  db,
  blobs,
  secrets,
  taskCreated,
  adminJwks,
  log,
  search = postgresUserSearch(db, config.project.id),
}: AppDependencies): Koa {
  const app = new Koa({ proxy: config.trustProxy });
  // What fails after the response began (a results file's stream that broke mid-way) reaches no
  // middleware: Koa emits it, and without a listener prints a bare stack to stderr.
  app.on('error', (err: unknown, ctx?: { path?: string }) =>
    log.error({ err, path: ctx?.path }, 'response failed after it began'),
  );
  const admin = [requireProjectHost(config.project), requireAdminJwt(adminJwks, config.project, log)];

  const router = new Router();
  router.get('/_api/admin/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  router.all('/_api/admin/graphql', ...admin, ...graphqlHandler(db, config.project, search, log));

  app.use(requestLog(log));
  app.use(errorEnvelope(log));
  const tasks = {
    config,
    imports: importService({ config, pool: db, secrets, blobs, taskCreated }),
    exports: exportService({ config, pool: db, blobs, taskCreated }),
    admin,
  };
  const webhooks = webhookRoutes(webhookService({ config, pool: db }), admin);
  for (const routes of [
    router,
    importRoutes(tasks),
    exportRoutes(tasks),
    webhooks,
    consoleRoutes(config, admin),
  ]) {
    app.use(routes.routes());
    app.use(routes.allowedMethods());
  }
  return app;
}
