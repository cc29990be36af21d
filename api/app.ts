import Router from '@koa/router';
import type { JSONWebKeySet } from 'jose';
import Koa from 'koa';
import type { BlobStorage } from '../pipeline/blob/blob-storage.js';
import type { ServiceConfig } from '../pipeline/config.js';
import type { Pool } from '../pipeline/db/pool.js';
import type { Logger } from '../pipeline/log.js';
import { fixedProjects, type ProjectRegistry } from '../pipeline/projects/project-registry.js';
import { postgresUserSearch } from '../pipeline/search/postgres-user-search.js';
import type { UserSearchIndex } from '../pipeline/search/user-search.js';
import { changeService } from '../pipeline/services/change-service.js';
import { exportService } from '../pipeline/services/export-service.js';
import { importService } from '../pipeline/services/import-service.js';
import { webhookService } from '../pipeline/services/webhook-service.js';
import type { SecretBox } from '../pipeline/tasks/task-secrets.js';
import { openApiDocument } from '../schemas/openapi.js';
import { requireAdminJwt } from './auth.js';
import { consoleRoutes } from './console/serve-console.js';
import { errorEnvelope } from './errors.js';
import { graphqlHandler } from './graphql/handler.js';
import { userLookups } from './graphql/lookup-batches.js';
import { type ProjectScope, projectOfHost } from './project-scope.js';
import { requestLog } from './request-log.js';
import { changeRoutes } from './routes/changes.js';
import { exportRoutes } from './routes/export.js';
import { importRoutes } from './routes/import.js';
import { importUploadRoutes } from './routes/import-uploads.js';
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
  /** The index behind `users(searchKeyword)` of a project: ClickHouse when configured; Postgres by default. */
  readonly search?: ((projectId: string) => UserSearchIndex) | undefined;
  /** The deployment's projects; by default the one of `config.project`. */
  readonly projects?: Pick<ProjectRegistry, 'byHost'> | undefined;
}

/**
 * The facade's middleware chain: request log, the error envelope, then per admin route the
 * project of the Host and the admin JWT before anything reads the body.
 */
export function createApp({
  config,
  db,
  blobs,
  secrets,
  taskCreated,
  adminJwks,
  log,
  search = (projectId) => postgresUserSearch(db, projectId),
  projects = fixedProjects([config.project]),
}: AppDependencies): Koa {
  const app = new Koa({ proxy: config.trustProxy });
  // What fails after the response began (a results file's stream that broke mid-way) reaches no
  // middleware: Koa emits it, and without a listener prints a bare stack to stderr.
  app.on('error', (err: unknown, ctx?: { path?: string }) =>
    log.error({ err, path: ctx?.path }, 'response failed after it began'),
  );
  const lookupsOf = userLookups(db);
  const scope = (projectConfig: ServiceConfig): ProjectScope => {
    const { project } = projectConfig;
    return {
      config: projectConfig,
      imports: importService({ config: projectConfig, pool: db, secrets, blobs, taskCreated }),
      exports: exportService({ config: projectConfig, pool: db, blobs, taskCreated }),
      webhooks: webhookService({ config: projectConfig, pool: db }),
      changes: changeService({ config: projectConfig, pool: db }),
      graphql: { db, lookups: lookupsOf(project.id), project, search: search(project.id) },
    };
  };
  const admin = [projectOfHost(projects, scope, config), requireAdminJwt(adminJwks, log)];

  const router = new Router();
  router.get('/_api/admin/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  router.all('/_api/admin/graphql', ...admin, ...graphqlHandler(log));

  app.use(requestLog(log));
  app.use(errorEnvelope(log));
  for (const routes of [
    router,
    importUploadRoutes(admin),
    importRoutes(admin),
    exportRoutes(admin),
    changeRoutes(admin),
    webhookRoutes(admin),
    consoleRoutes(config, admin),
  ]) {
    app.use(routes.routes());
    app.use(routes.allowedMethods());
  }
  return app;
}
