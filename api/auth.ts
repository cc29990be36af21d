import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import type { Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import type { ProjectConfig } from '../pipeline/config.js';
import { ApiError } from '../pipeline/errors.js';
import type { Logger } from '../pipeline/log.js';
import { scopeOf } from './project-scope.js';
import { setActingAdmin } from './request-log.js';

/** Projects whose verifiers are kept at once. */
const VERIFIERS_KEPT = 1_000;
/** Tokens that passed, kept at once across every project: the memory does not grow with projects. */
const TOKENS_KEPT = 10_000;

/** How one project's tokens are checked. */
interface ProjectVerifier {
  readonly keys: ReturnType<typeof createLocalJWKSet>;
  readonly options: { audience: string; algorithms: string[]; requiredClaims: string[] };
}

/** A token that passed: for which project as it was read, and the acting admin it names. */
interface VerifiedToken {
  readonly project: ProjectConfig;
  readonly admin: string;
}

/** The project's keys (its own, else the deployment's) and checks. */
function projectVerifier(project: ProjectConfig, deploymentJwks: JSONWebKeySet): ProjectVerifier {
  return {
    keys: createLocalJWKSet((project.adminApi.jwks as JSONWebKeySet | undefined) ?? deploymentJwks),
    options: {
      audience: project.publicOrigin,
      algorithms: [...project.adminApi.algorithms],
      requiredClaims: ['exp'],
    },
  };
}

/**
 * Requires `Authorization: Bearer <admin JWT>` signed by one of the request's project's admin keys with an
 * allowed asymmetric algorithm, `aud` = the project's public origin and an `exp` in the future.
 * Every failure is a 403 (decisions 5.4) that says which check failed (`info.cause`, and RFC 6750's
 * `WWW-Authenticate`), logged with it, never with the token.
 *
 * An admin client sends the same token until it expires, and an RSA verification costs more than
 * a whole lookup; so a token that passed is remembered until its own `exp`, never longer.
 */
export function requireAdminJwt(deploymentJwks: JSONWebKeySet, log: Logger): Middleware {
  // Per project as last read: a project read again (a key rotated) has a verifier of its own, and
  // the tokens its old keys passed are not remembered for it.
  const verifiers = new LRUCache<ProjectConfig, ProjectVerifier>({ max: VERIFIERS_KEPT });
  // Keyed by project and token: one token may serve several projects that share keys.
  const verified = new LRUCache<string, VerifiedToken>({ max: TOKENS_KEPT, ttlAutopurge: false });
  const verifierOf = (project: ProjectConfig) => {
    let verifier = verifiers.get(project);
    if (!verifier) {
      verifier = projectVerifier(project, deploymentJwks);
      verifiers.set(project, verifier);
    }
    return verifier;
  };
  return async (ctx, next) => {
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(ctx.get('authorization'));
    const token = match?.[1];
    if (!token) {
      const cause = ctx.get('authorization') === '' ? 'missing' : 'malformed';
      log.info({ cause }, 'admin JWT refused');
      throw forbidden(cause);
    }
    const { project } = scopeOf(ctx).config;
    const key = `${project.id} ${token}`;
    const passed = verified.get(key);
    let admin = passed?.project === project ? passed.admin : undefined;
    if (admin === undefined) {
      const { keys, options } = verifierOf(project);
      try {
        const { payload } = await jwtVerify(token, keys, options);
        admin = typeof payload.sub === 'string' ? payload.sub : '';
        const ttl = (payload.exp as number) * 1000 - Date.now();
        if (ttl > 0) verified.set(key, { project, admin }, { ttl });
      } catch (err) {
        // Which check failed (e.g. claim `aud`, with the audience expected), never the token.
        const { code, claim, reason } = err as { code?: string; claim?: string; reason?: string };
        const cause = refusalOf(code, claim);
        log.info(
          { cause, code, claim, reason, project_id: project.id, expected_audience: project.publicOrigin },
          'admin JWT refused',
        );
        throw forbidden(cause);
      }
    }
    if (admin) setActingAdmin(ctx, admin);
    await next();
  };
}

/** Why a token was refused, in words a client can act on (`info.cause` and the header's description). */
const REFUSALS = {
  missing: 'no admin JWT was given',
  malformed: 'the Authorization header is not a Bearer JWT',
  expired: 'the token expired',
  not_yet_valid: 'the token is not valid yet',
  audience: "the token's aud is not this project's public origin",
  claim: 'the token lacks a required claim or has one of the wrong form',
  algorithm: "the token's algorithm is not one the project accepts",
  unknown_key: "the token's key is not one of the project's admin keys",
  signature: "the token's signature does not verify",
  unreadable: 'the token cannot be read as a JWT',
} as const;
type Refusal = keyof typeof REFUSALS;

/** jose's error code (and failing claim) as a refusal. */
function refusalOf(code: string | undefined, claim: string | undefined): Refusal {
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return claim === 'aud' ? 'audience' : claim === 'nbf' ? 'not_yet_valid' : 'claim';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'algorithm';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_key';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature';
    default:
      return 'unreadable';
  }
}

/**
 * The refusal: 403 with the cause, and RFC 6750's header (a request without a token gets the
 * challenge alone, one with a bad token `invalid_token` and a short description).
 */
function forbidden(cause: Refusal): ApiError {
  const challenge =
    cause === 'missing'
      ? 'Bearer'
      : `Bearer error="invalid_token", error_description="${REFUSALS[cause].replaceAll('"', "'")}"`;
  return new ApiError(
    'InvalidAdminJWT',
    `a valid admin JWT is required: ${REFUSALS[cause]}`,
    { cause },
    { headers: { 'WWW-Authenticate': challenge } },
  );
}
