import type { Middleware } from 'koa';
import { ImportRequestError } from '../errors.js';

/**
 * Import endpoints accept HTTPS requests only (decisions 5.3): the connection's TLS, or, only when the
 * deployment trusts its proxy, `X-Forwarded-Proto: https` (Koa reads it when `proxy` is on).
 */
export const requireHttps: Middleware = async (ctx, next) => {
  if (ctx.protocol !== 'https') throw new ImportRequestError(400, 'HTTPS is required');
  await next();
};
