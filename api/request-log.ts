import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../pipeline/log.js';
import { httpDuration } from '../pipeline/operator/metrics.js';
import type { RequestedBy } from '../pipeline/services/task-requests.js';

/** An X-Request-Id a client sent that is kept: visible ASCII, as long as a trace id needs. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** What a request carries for the lines logged on its behalf. */
interface RequestState {
  requestId?: string;
  admin?: string;
  log?: Logger;
}

/**
 * Names every request: its `X-Request-Id` (the client's, or one made here), echoed in the
 * response; then one line per request: method, path (never the query string, which may carry
 * lookup values), status, body size, duration, request id and acting admin. Headers are not
 * logged, so the Authorization token never is. The duration goes to the `/metrics` histogram.
 */
export function requestLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const sent = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(sent) ? sent : randomUUID();
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    const requestLog = log.child({ request_id: requestId });
    state.log = requestLog;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const bytes = Number(ctx.get('content-length')) || undefined;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      httpDuration.observe({ method: ctx.method, route: String(route), status: String(ctx.status) }, seconds);
      requestLogger(ctx, requestLog).info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          bytes,
          ms: Math.round(seconds * 1e5) / 100,
        },
        'request',
      );
    }
  };
}

/** The logger of a request: its lines carry the request id and, once authenticated, the admin. */
export function requestLogger(ctx: Context, fallback: Logger): Logger {
  return (ctx.state as RequestState).log ?? fallback;
}

/** Records the acting admin (the admin JWT's `sub`) of a request, on its later log lines too. */
export function setActingAdmin(ctx: Context, admin: string): void {
  const state = ctx.state as RequestState;
  state.admin = admin;
  if (state.log) state.log = state.log.child({ admin });
}

/** The request that asks for a task, as the task's log lines name it. */
export function requestedBy(ctx: Context): RequestedBy {
  const state = ctx.state as RequestState;
  return {
    ...(state.requestId ? { request_id: state.requestId } : {}),
    ...(state.admin ? { admin: state.admin } : {}),
  };
}
