import type { Middleware } from 'koa';
import type { Logger } from '../pipeline/log.js';

/**
 * One line per request: method, path (never the query string, which may carry lookup values),
 * status, body size and duration. Headers are not logged, so the Authorization token never is.
 */
export function requestLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const bytes = Number(ctx.get('content-length')) || undefined;
      log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, bytes, ms: Math.round(ms * 100) / 100 },
        'request',
      );
    }
  };
}
