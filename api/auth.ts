import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import type { Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import type { ProjectConfig } from '../pipeline/config.js';
import { ApiError } from '../pipeline/errors.js';
import type { Logger } from '../pipeline/log.js';
import { setActingAdmin } from './request-log.js';

/** Refuses a request whose `Host` (port ignored) is not the project's domain. */
export function requireProjectHost(project: ProjectConfig): Middleware {
  const domain = project.domain.toLowerCase();
  return async (ctx, next) => {
    if (ctx.hostname.toLowerCase() !== domain) {
      throw new ApiError('UnknownHost', 'the Host header does not name this project');
    }
    await next();
  };
}

/**
 * Requires `Authorization: Bearer <admin JWT>` signed by one of the project's admin keys with an
 * allowed asymmetric algorithm, `aud` = the project's public origin and an `exp` in the future.
 * Every failure is the same 403 (decisions 5.4); the reason is logged, never the token.
 *
 * An admin client sends the same token until it expires, and an RSA verification costs more than
 * a whole lookup; so a token that passed is remembered until its own `exp`, never longer.
 */
export function requireAdminJwt(jwks: JSONWebKeySet, project: ProjectConfig, log: Logger): Middleware {
  const keys = createLocalJWKSet(jwks);
  const options = {
    audience: project.publicOrigin,
    algorithms: [...project.adminApi.algorithms],
    requiredClaims: ['exp'],
  };
  // Token -> its `sub` (the acting admin, on the request's log lines).
  const verified = new LRUCache<string, string>({ max: 1000, ttlAutopurge: false });
  return async (ctx, next) => {
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(ctx.get('authorization'));
    const token = match?.[1];
    if (!token) throw forbidden();
    let admin = verified.get(token);
    if (admin === undefined) {
      try {
        const { payload } = await jwtVerify(token, keys, options);
        admin = typeof payload.sub === 'string' ? payload.sub : '';
        const ttl = (payload.exp as number) * 1000 - Date.now();
        if (ttl > 0) verified.set(token, admin, { ttl });
      } catch (err) {
        // Which check failed (e.g. claim `aud`, with the audience expected), never the token.
        const { code, claim, reason } = err as { code?: string; claim?: string; reason?: string };
        log.info({ code, claim, reason, expected_audience: project.publicOrigin }, 'admin JWT refused');
        throw forbidden();
      }
    }
    if (admin) setActingAdmin(ctx, admin);
    await next();
  };
}

function forbidden(): ApiError {
  return new ApiError('InvalidAdminJWT', 'a valid admin JWT is required');
}
