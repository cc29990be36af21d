import type { Middleware } from 'koa';
import { ApiError, classifyFault, envelopeError, serviceUnavailable } from '../pipeline/errors.js';
import type { Logger } from '../pipeline/log.js';
import { requestLogger } from './request-log.js';

/**
 * An import request error: decisions 4.3/4.4 give it a body with one member `error`, a string, instead
 * of the envelope.
 */
export class ImportRequestError extends Error {
  override readonly name = 'ImportRequestError';
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The envelope body of an error: `{error: {name, reason, message, code, info?}}`. */
export function envelope(err: ApiError): { error: Record<string, unknown> } {
  return { error: envelopeError(err) };
}

/**
 * Converts anything thrown into an API error: what the HTTP layer throws (koa-body and co-body
 * errors carry an HTTP `status`, and `expose` when their message is meant for the caller); a
 * dependency that is down is 503 ServiceUnavailable with `Retry-After`; anything else is an
 * InternalError whose detail stays in the log.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const fault = classifyFault(err);
  if (fault.kind === 'transient') return serviceUnavailable(fault.dependency ?? 'database', err);
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
  if (status === 413) {
    return new ApiError('RequestEntityTooLarge', 'request body too large', undefined, {
      cause: err,
    });
  }
  if (status >= 400 && status < 500) {
    return new ApiError('BadRequest', clientMessage(err), undefined, { cause: err });
  }
  return new ApiError('UnexpectedError', 'unexpected error', undefined, { cause: err });
}

function clientMessage(err: unknown): string {
  if (err instanceof SyntaxError) return 'request body is not valid JSON';
  const exposed = typeof err === 'object' && err !== null && 'expose' in err && err.expose === true;
  return exposed && err instanceof Error ? err.message : 'bad request';
}

/**
 * The one middleware that writes error responses, and logs each failed request once. A path no
 * route answers is a NotFound in the envelope too.
 */
export function errorEnvelope(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('NotFound', 'no such endpoint');
      }
    } catch (thrown) {
      if (thrown instanceof ImportRequestError) {
        ctx.status = thrown.status;
        ctx.body = { error: thrown.message };
        return;
      }
      const err = toApiError(thrown);
      if (err.name === 'InternalError')
        requestLogger(ctx, log).error({ err: thrown, path: ctx.path }, 'request failed');
      if (err.name === 'ServiceUnavailable')
        requestLogger(ctx, log).warn({ err: thrown, path: ctx.path }, 'request met an outage');
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.body = envelope(err);
    }
  };
}
