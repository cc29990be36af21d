import type { Middleware } from 'koa';
import { ApiError, envelopeError, STATUS_BY_NAME } from '../pipeline/errors.js';
import type { Logger } from '../pipeline/log.js';

/**
 * An import request error: spec 4.3/4.4 give it a body with one member `error`, a string, instead
 * of the envelope.
 */
export class ImportRequestError extends Error {
  override readonly name = 'ImportRequestError';
  constructor(
    readonly status: 400 | 413 | 503,
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
 * Converts what the HTTP layer itself throws (koa-body and co-body errors carry an HTTP `status`,
 * and `expose` when their message is meant for the caller) into API errors; anything else is an
 * InternalError whose detail stays in the log.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
  if (status === 413) {
    return new ApiError(
      'RequestEntityTooLarge',
      'RequestEntityTooLarge',
      'request body too large',
      undefined,
      err,
    );
  }
  if (status >= 400 && status < 500) {
    return new ApiError('Invalid', 'BadRequest', clientMessage(err), undefined, err);
  }
  return new ApiError('InternalError', 'UnexpectedError', 'unexpected error', undefined, err);
}

function clientMessage(err: unknown): string {
  if (err instanceof SyntaxError) return 'request body is not valid JSON';
  const exposed = typeof err === 'object' && err !== null && 'expose' in err && err.expose === true;
  return exposed && err instanceof Error ? err.message : 'bad request';
}

/** The one middleware that writes error responses, and logs each failed request once. */
export function errorEnvelope(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      if (thrown instanceof ImportRequestError) {
        ctx.status = thrown.status;
        ctx.body = { error: thrown.message };
        return;
      }
      const err = toApiError(thrown);
      if (err.name === 'InternalError') log.error({ err: thrown, path: ctx.path }, 'request failed');
      ctx.status = STATUS_BY_NAME[err.name];
      ctx.body = envelope(err);
    }
  };
}
