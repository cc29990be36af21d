import { ERROR_NAMES, ERROR_REASONS, type ErrorName, type ErrorReason } from '../schemas/error-reasons.js';

/**
 * The one error family of the service. An ApiError is what a caller sees: a `reason` of the
 * catalogue (schemas/error-reasons.ts), which fixes its `name` and HTTP status, an optional
 * `info`, response headers (`Retry-After`) and whether trying again later may succeed. An
 * EngineError is a fault of the workers' own making, with a stable code. `classifyFault` is the one
 * place that tells what any error means: Postgres by SQLSTATE, Node and Kafka by their codes, Azure
 * by its status, ours by their class.
 */
export type { ErrorName, ErrorReason };

/** Extra members of an ApiError beyond reason, message and info. */
export interface ApiErrorOptions {
  readonly cause?: unknown;
  /** Response headers that go with the error, e.g. `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>;
}

export class ApiError extends Error {
  override readonly name: ErrorName;
  readonly reason: ErrorReason;
  readonly info: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    reason: ErrorReason,
    message: string,
    info?: Record<string, unknown>,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = ERROR_REASONS[reason].name;
    this.reason = reason;
    this.info = info;
    this.headers = options.headers ?? {};
  }

  /** The HTTP status of the error's name. */
  get status(): number {
    return ERROR_NAMES[this.name];
  }

  /** Whether the same request may succeed later (the service was busy or a dependency was down). */
  get retriable(): boolean {
    return this.name === 'ServiceUnavailable' || this.name === 'TooManyRequest';
  }
}

/** A dependency was unreachable: 503 with `Retry-After`. */
export function serviceUnavailable(dependency: Dependency, cause?: unknown, retryAfterSeconds = 5): ApiError {
  return new ApiError(
    'ServiceUnavailable',
    `the ${dependency} is unavailable; try again later`,
    { dependency },
    { cause, headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}

/** The members of an error object: `{name, reason, message, info?}` (`info` omitted when empty). */
function errorFields(err: ApiError): Record<string, unknown> {
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
  return { ...fields, code: err.status, ...(info ? { info } : {}) };
}

/**
 * The codes of the engine's own faults, each with when it is raised and whether it may pass; a
 * fault the admin can act on names the reason its task ends with (others end UnexpectedError).
 */
export const ENGINE_FAULTS = {
  /** An export task reached a worker that has no blob storage (export is disabled there). */
  ExportStorageMissing: { transient: false, reason: 'UserExportDisabled' },
  /** A file import reached a worker that has no blob storage. */
  ImportStorageMissing: { transient: false, reason: 'ImportFilesDisabled' },
  /** A part of a split file import met a fault that will not pass. */
  ImportPartFailed: { transient: false },
  /** A read of a file import's sealed copy ended before its frames did (a read cut short): tried again. */
  SealedFileShort: { transient: true },
  /** A records row of the export statement that the assembler does not know: a bug, certain to repeat. */
  RecordsRowUnexpected: { transient: false },
  /** A split export's snapshot id that is not one pg_export_snapshot() returns. */
  SnapshotIdInvalid: { transient: false },
  /** The parts of a split export were deleted under its coordinator (the task ended elsewhere). */
  ExportPartsGone: { transient: false },
  /** A part of a split export failed with a fault that will not pass; `message` names it. */
  ExportPartFailed: { transient: false },
  /** An export file that would pass the blob store's limit on one file. */
  ExportFileTooLarge: { transient: false, reason: 'UserExportFileTooLarge' },
  /** A custom attribute of the project configuration with a type the importer does not know. */
  CustomAttributeTypeUnknown: { transient: false },
  /** An import record names a sealed secret its task message does not carry. */
  SealedSecretMissing: { transient: false },
  /** A sealed task secret in an unknown format, or sealed with a key this process lacks. */
  SealedSecretUnreadable: { transient: false },
  /** A valid import record without the member its identifier names: a bug. */
  RecordIdentifierMissing: { transient: false },
  /** Blob storage configured without the account key that signs download URLs. */
  BlobSigningKeyMissing: { transient: false },
  /** A task row's stored settings that do not pass their schema (schemas/task-options.schema.ts). */
  TaskOptionsInvalid: { transient: false },
  /** An embedded Postgres that did not start. */
  EmbeddedPostgresFailed: { transient: false },
  /** A port the process must listen on (or give its embedded server) that another process holds. */
  PortTaken: { transient: false },
  /** A task of a project that is not registered (deleted after the task was accepted). */
  ProjectUnknown: { transient: false },
  /** A pipeline stage that threw (a bug, or input no check foresaw): the task fails, not the process. */
  StageFault: { transient: false },
} as const satisfies Record<string, { readonly transient: boolean; readonly reason?: ErrorReason }>;

export type EngineFaultCode = keyof typeof ENGINE_FAULTS;

/**
 * A fault of the workers' own making, with a stable code from ENGINE_FAULTS: a transient one is
 * retried, any other ends its task at once with its code.
 */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineFaultCode,
    message: string,
    options: { readonly cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  get transient(): boolean {
    return ENGINE_FAULTS[this.code].transient;
  }

  /** The reason its task ends with, when the fault has one of its own. */
  get reason(): ErrorReason | undefined {
    const fault = ENGINE_FAULTS[this.code];
    return 'reason' in fault ? fault.reason : undefined;
  }
}

/** A configuration file or variable that does not pass its schema; the service refuses to start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The attempt at a task that met this no longer owns it: its lease lapsed and another worker
 * claimed the task, or it was released. Its worker stops and writes nothing more; no one is told.
 */
export class AttemptLost extends Error {
  override readonly name = 'AttemptLost';
}

/** The outside services a fault can come from. */
export type Dependency = 'database' | 'task bus' | 'blob storage' | 'search index' | 'file source';

/**
 * What an error means for the work that met it:
 * - `transient`: a dependency was unreachable or busy; the same work may succeed later;
 * - `data`: the database refused a value (SQLSTATE class 22, 23 or 54): the record is at fault;
 * - `unknown`: an error with no code at all. node-postgres reports a connection that ended under a
 *   query that way (https://github.com/brianc/node-postgres/blob/master/packages/pg/lib/client.js),
 *   and so does a bug: a task retries it a few times, a request answers InternalError;
 * - `permanent`: anything else; trying again will not help.
 */
export type Fault =
  | { readonly kind: 'transient'; readonly dependency: Dependency | undefined; readonly code: string }
  | { readonly kind: 'data'; readonly code: string }
  | { readonly kind: 'unknown'; readonly code: undefined }
  | { readonly kind: 'permanent'; readonly code: string };

/** Postgres SQLSTATE classes (first two characters) of each kind of fault. */
const TRANSIENT_SQLSTATE_CLASSES = new Set([
  '08', // connection exception
  '40', // transaction rollback: serialization failure, deadlock
  '53', // insufficient resources
  '57', // operator intervention: admin shutdown, crash shutdown, cannot connect now
  '58', // system error (I/O)
]);
const DATA_SQLSTATE_CLASSES = new Set([
  '22', // data exception: a NUL byte, an invalid text representation, a value out of range
  '23', // integrity constraint violation: a unique login id taken meanwhile
  '54', // program limit exceeded: a value too large for its index
]);

/** Codes of a connection that failed or broke, or of a request its client gave up on. */
const UNREACHED_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  // A request a client library gave up on (its own timeout). The service's own stops (a cancel, a
  // lost lease, a drain) are told apart by their signals before any fault is classified.
  'ABORT_ERR',
]);

/** A lock not granted within lock_timeout: the holder (a host that vanished?) is gone later. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Postgres SQLSTATE for a unique constraint violation. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a Postgres error, if it is one (five characters, as the server sends it). */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const severity = (err as { severity?: unknown } | null)?.severity;
  return typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code)
    ? code
    : undefined;
}

/** Classifies an error by its codes, never by its message text. */
export function classifyFault(err: unknown): Fault {
  if (err instanceof ApiError) {
    return err.name === 'ServiceUnavailable'
      ? { kind: 'transient', dependency: err.info?.dependency as Dependency | undefined, code: err.reason }
      : { kind: 'permanent', code: err.reason };
  }
  if (err instanceof EngineError) {
    return err.transient
      ? { kind: 'transient', dependency: undefined, code: err.code }
      : { kind: 'permanent', code: err.code };
  }
  if (err instanceof AttemptLost) return { kind: 'permanent', code: 'AttemptLost' };
  const state = sqlState(err);
  if (state) {
    const cls = state.slice(0, 2);
    if (TRANSIENT_SQLSTATE_CLASSES.has(cls) || state === LOCK_NOT_AVAILABLE)
      return { kind: 'transient', dependency: 'database', code: state };
    if (DATA_SQLSTATE_CLASSES.has(cls)) return { kind: 'data', code: state };
    return { kind: 'permanent', code: state };
  }
  const e = err as { code?: unknown; statusCode?: unknown; retriable?: unknown; name?: unknown } | null;
  // Azure's RestError: the service's HTTP status, or REQUEST_SEND_ERROR when it was not reached.
  if (e?.name === 'RestError') {
    const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
    const code = typeof e.code === 'string' ? e.code : String(status);
    const transient =
      status === 0 || status === 408 || status === 429 || status >= 500 || code === 'InvalidBlockList';
    return transient ? { kind: 'transient', dependency: 'blob storage', code } : { kind: 'permanent', code };
  }
  // kafkajs marks each of its errors retriable or not.
  if (typeof e?.name === 'string' && e.name.startsWith('KafkaJS')) {
    return e.retriable === true ||
      e.name === 'KafkaJSNumberOfRetriesExceeded' ||
      e.name === 'KafkaJSConnectionError'
      ? { kind: 'transient', dependency: 'task bus', code: e.name }
      : { kind: 'permanent', code: e.name };
  }
  if (typeof e?.code === 'string' && UNREACHED_CODES.has(e.code)) {
    return { kind: 'transient', dependency: undefined, code: e.code };
  }
  return typeof e?.code === 'string'
    ? { kind: 'permanent', code: e.code }
    : { kind: 'unknown', code: undefined };
}
