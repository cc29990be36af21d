import Router from '@koa/router';
import type { JSONWebKeySet } from 'jose';
import Koa from 'koa';
import type { BlobStorage } from '../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../pipeline/bus/bus.js';
import type { ServiceConfig } from '../pipeline/config.js';
import type { Pool } from '../pipeline/db/pool.js';
import type { Logger } from '../pipeline/log.js';
import { requireAdminJwt, requireProjectHost } from './auth.js';
import { errorEnvelope } from './errors.js';
import { graphqlHandler } from './graphql/handler.js';
import { jsonBody } from './json-body.js';
import { requestLog } from './request-log.js';
import { exportRoutes } from './routes/export.js';
import { importRoutes } from './routes/import.js';

/** What the facade stands on; built once by main.ts (or a test). */
export interface AppDependencies {
  readonly config: ServiceConfig;
  readonly db: Pool;
  readonly bus: TaskBus;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  readonly adminJwks: JSONWebKeySet;
  readonly log: Logger;
}

/**
 * The facade's middleware chain: request log, the error envelope, then per admin route the Host
 * check and the admin JWT before anything reads the body.
 */
export function createApp({ config, db, bus, blobs, adminJwks, log }: AppDependencies): Koa {
  const app = new Koa({ proxy: config.trustProxy });
  const admin = [requireProjectHost(config.project), requireAdminJwt(adminJwks, config.project, log)];

  const router = new Router();
  router.all('/_api/admin/graphql', ...admin, jsonBody('1mb'), graphqlHandler(db, config.project, log));

  app.use(requestLog(log));
  app.use(errorEnvelope(log));
  const imports = importRoutes({ config, pool: db, bus, log, admin });
  const exports = exportRoutes({ config, pool: db, bus, blobs, log, admin });

  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(imports.routes());
  app.use(imports.allowedMethods());
  app.use(exports.routes());
  app.use(exports.allowedMethods());
  return app;
}
