import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import type { Middleware } from 'koa';
import type { ProjectConfig } from '../pipeline/config.js';
import { ApiError } from '../pipeline/errors.js';
import type { Logger } from '../pipeline/log.js';

/** Refuses a request whose `Host` (port ignored) is not the project's domain. */
export function requireProjectHost(project: ProjectConfig): Middleware {
  const domain = project.domain.toLowerCase();
  return async (ctx, next) => {
    if (ctx.hostname.toLowerCase() !== domain) {
      throw new ApiError('Forbidden', 'UnknownHost', 'the Host header does not name this project');
    }
    await next();
  };
}

/**
 * Requires `Authorization: Bearer <admin JWT>` signed by one of the project's admin keys with an
 * allowed asymmetric algorithm, `aud` = the project's public origin and an `exp` in the future.
 * Every failure is the same 403 (spec 5.4); the reason is logged, never the token.
 */
export function requireAdminJwt(jwks: JSONWebKeySet, project: ProjectConfig, log: Logger): Middleware {
  const keys = createLocalJWKSet(jwks);
  const options = {
    audience: project.publicOrigin,
    algorithms: [...project.adminApi.algorithms],
    requiredClaims: ['exp'],
  };
  return async (ctx, next) => {
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(ctx.get('authorization'));
    if (!match?.[1]) throw forbidden();
    try {
      await jwtVerify(match[1], keys, options);
    } catch (err) {
      log.info({ code: (err as { code?: string }).code }, 'admin JWT refused');
      throw forbidden();
    }
    await next();
  };
}

function forbidden(): ApiError {
  return new ApiError('Forbidden', 'InvalidAdminJWT', 'a valid admin JWT is required');
}
