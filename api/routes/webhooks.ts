import Router from '@koa/router';
import type { Middleware } from 'koa';
import { ApiError } from '../../pipeline/errors.js';
import type { AttemptRow } from '../../pipeline/services/webhook-service.js';
import { isTaskId } from '../../schemas/task-id.js';
import { scopeOf } from '../project-scope.js';
import { pageLimit, patternedValue } from './list-query.js';

const PATH = '/_api/admin/webhooks';
/** The largest page of delivery attempts, and the page when the request names none. */
export const MAX_ATTEMPTS_LIMIT = 200;
const DEFAULT_ATTEMPTS_LIMIT = 50;
/** What each filter of the deliveries list must be: its values' patterns. */
const FILTERS = {
  after: { test: (t: string) => /^\d{1,18}$/.test(t), describe: 'the cursor a page of this list carries' },
  event_id: {
    test: (t: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t),
    describe: 'an event id',
  },
  // An endpoint id as the project file names it.
  endpoint: { test: (t: string) => /^[a-zA-Z0-9_-]{1,64}$/.test(t), describe: 'an endpoint id' },
  task_id: {
    test: (t: string) => isTaskId('import', t) || isTaskId('export', t),
    describe: 'a task id',
  },
} as const;

/**
 * GET /_api/admin/webhooks/endpoints (the project's endpoints and whether a 410 disabled them),
 * POST /_api/admin/webhooks/endpoints/:id/enable, and GET /_api/admin/webhooks/deliveries (every
 * delivery attempt, newest first, a page at a time; of one endpoint, event or task).
 */
export function webhookRoutes(admin: readonly Middleware[]): Router {
  const router = new Router();
  const refuse = (message: string) => new ApiError('BadRequest', message);

  router.get(`${PATH}/endpoints`, ...admin, async (ctx) => {
    ctx.body = { endpoints: await scopeOf(ctx).webhooks.endpoints() };
  });

  router.post(`${PATH}/endpoints/:id/enable`, ...admin, async (ctx) => {
    ctx.body = await scopeOf(ctx).webhooks.enable(ctx.params.id ?? '');
  });

  router.get(`${PATH}/deliveries`, ...admin, async (ctx) => {
    const one = (name: keyof typeof FILTERS) => patternedValue(ctx.query, name, FILTERS[name], refuse);
    const limit = pageLimit(ctx.query, { max: MAX_ATTEMPTS_LIMIT, fallback: DEFAULT_ATTEMPTS_LIMIT }, refuse);
    const after = one('after');
    const filters = { endpointId: one('endpoint'), eventId: one('event_id'), taskId: one('task_id') };
    const found = await scopeOf(ctx).webhooks.attempts({ ...filters, after, limit });
    const last = found.attempts.at(-1);
    const next = new URLSearchParams({ limit: String(limit) });
    for (const [name, value] of [
      ['endpoint', filters.endpointId],
      ['event_id', filters.eventId],
      ['task_id', filters.taskId],
    ] as const) {
      if (value !== undefined) next.set(name, value);
    }
    ctx.body = {
      deliveries: found.attempts.map(shownAttempt),
      ...(found.more && last ? { next: `${ctx.path}?${next}&after=${last.id}` } : {}),
    };
  });

  return router;
}

/** An attempt as the list shows it: absent values omitted, never null. */
function shownAttempt(a: AttemptRow): Record<string, unknown> {
  return {
    id: a.id,
    event_id: a.event_id,
    event_type: a.event_type,
    ...(a.task_id === null ? {} : { task_id: a.task_id }),
    endpoint: a.endpoint_id,
    url: a.url,
    attempt: a.attempt,
    started_at: a.started_at.toISOString(),
    ...(a.duration_ms === null ? {} : { duration_ms: a.duration_ms }),
    ...(a.status_code === null ? {} : { status_code: a.status_code }),
    ...(a.error === null ? {} : { error: a.error }),
    // An attempt without an outcome is in flight, or its worker died and another attempt follows.
    outcome: a.outcome ?? 'unfinished',
  };
}
