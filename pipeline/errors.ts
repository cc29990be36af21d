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

/** A configuration file or variable that does not pass its schema; the service refuses to start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
