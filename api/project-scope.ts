import type { Context, Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import { type ProjectConfig, type ServiceConfig, withProject } from '../pipeline/config.js';
import { ApiError } from '../pipeline/errors.js';
import type { ProjectRegistry } from '../pipeline/projects/project-registry.js';
import type { ChangeService } from '../pipeline/services/change-service.js';
import type { ExportService } from '../pipeline/services/export-service.js';
import type { ImportService } from '../pipeline/services/import-service.js';
import type { WebhookService } from '../pipeline/services/webhook-service.js';
import type { GraphQLContext } from './graphql/context.js';

/**
 * What one project's admin requests stand on: the deployment's settings with the project's own
 * (`config.project`), and the services bound to that project. Built when a project is first asked
 * for and kept while it is in use; a project read again (changed) gets a scope of its own.
 */
export interface ProjectScope {
  readonly config: ServiceConfig;
  readonly imports: ImportService;
  readonly exports: ExportService;
  readonly webhooks: WebhookService;
  readonly changes: ChangeService;
  readonly graphql: GraphQLContext;
}

/** Scopes kept at once: built again in microseconds, so only the projects in use are kept. */
const SCOPES_KEPT = 1_000;

/**
 * The middleware that finds the request's project by its `Host` (port ignored) and puts its
 * scope on the request. A Host that names no project is refused as a request for no project at all,
 * telling nothing about which projects exist.
 */
export function projectOfHost(
  projects: Pick<ProjectRegistry, 'byHost'>,
  build: (config: ServiceConfig) => ProjectScope,
  deployment: ServiceConfig,
): Middleware {
  const scopes = new LRUCache<ProjectConfig, ProjectScope>({ max: SCOPES_KEPT });
  return async (ctx, next) => {
    const project = projects.byHost(ctx.hostname);
    if (!project) throw new ApiError('UnknownHost', 'the Host header does not name this project');
    let scope = scopes.get(project);
    if (!scope) {
      scope = build(withProject(deployment, project));
      scopes.set(project, scope);
    }
    ctx.state.scope = scope;
    await next();
  };
}

/** The scope `projectOfHost` put on the request. */
export function scopeOf(ctx: Context): ProjectScope {
  const scope = ctx.state.scope as ProjectScope | undefined;
  if (!scope) throw new ApiError('UnexpectedError', 'no project scope: projectOfHost must run first');
  return scope;
}
