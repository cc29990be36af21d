/**
 * Errors in the API's vocabulary: a stable `name` (which fixes the HTTP status) and `reason`, an
 * optional `info`, and the `cause`. Only these errors are shown to a caller; anything else is an
 * InternalError whose details stay in the log.
 */
export type ErrorName =
  | 'Invalid'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'RequestEntityTooLarge'
  | 'TooManyRequest'
  | 'InternalError'
  | 'ServiceUnavailable';

/** HTTP status by error name (DECISIONS.md, Envelopes and errors). */
export const STATUS_BY_NAME: Readonly<Record<ErrorName, number>> = {
  Invalid: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  RequestEntityTooLarge: 413,
  TooManyRequest: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
};

export class ApiError extends Error {
  override readonly name: ErrorName;
  readonly reason: string;
  readonly info: Readonly<Record<string, unknown>> | undefined;

  constructor(
    name: ErrorName,
    reason: string,
    message: string,
    info?: Record<string, unknown>,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
    this.reason = reason;
    this.info = info;
  }
}

/** The members of an error object: `{name, reason, message, info?}` (`info` omitted when empty). */
export function errorFields(err: ApiError): Record<string, unknown> {
  return {
    name: err.name,
    reason: err.reason,
    message: err.message,
    ...(err.info && Object.keys(err.info).length > 0 ? { info: err.info } : {}),
  };
}

/** The error object of the envelope: the fields and the HTTP `code` of the error's name. */
export function envelopeError(err: ApiError): Record<string, unknown> {
  const { info, ...fields } = errorFields(err);
  return { ...fields, code: STATUS_BY_NAME[err.name], ...(info ? { info } : {}) };
}

/** A configuration file or variable that does not pass its schema; the service refuses to start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
