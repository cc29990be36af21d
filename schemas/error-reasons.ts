/**
 * Every reason an error of the service can carry: its name (which fixes the HTTP status), and one
 * line that says when it is answered. The OpenAPI document and docs/errors.md are written from it
 * (`npm run contracts`), and an error cannot be made with a reason that is not here.
 */
export const ERROR_NAMES = {
  Invalid: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Gone: 410,
  RequestEntityTooLarge: 413,
  UnprocessableEntity: 422,
  TooManyRequest: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
} as const;

export type ErrorName = keyof typeof ERROR_NAMES;

interface ReasonEntry {
  readonly name: ErrorName;
  readonly doc: string;
}

export const ERROR_REASONS = {
  BadRequest: {
    name: 'Invalid',
    doc: 'The request is not what the endpoint reads: a body that is not JSON, a wrong Content-Type or Idempotency-Key.',
  },
  ValidationFailed: {
    name: 'Invalid',
    doc: 'A request, record or argument does not pass its schema; `info.causes` lists location, kind and details.',
  },
  UserExportNonUniqueFieldNames: {
    name: 'Invalid',
    doc: 'Two CSV columns of an export request have the same field name; `info.field_names` lists them.',
  },
  UserExportFileTooLarge: {
    name: 'Invalid',
    doc: "An export whose file would pass the blob store's limit on one file (50,000 blocks of 8 MiB); the task fails with it after its first part. Export fewer users (filters) or ask for gzip.",
  },
  TaskAlreadyCompleted: { name: 'Invalid', doc: 'A cancel of an export that has already completed.' },
  ChangesCursorInvalid: {
    name: 'Invalid',
    doc: 'A change feed cursor (`after`, Last-Event-ID) that this service did not hand out.',
  },
  ImportUploadExpired: {
    name: 'Invalid',
    doc: 'An import naming an upload whose URL expired (IMPORT_UPLOAD_SECONDS) before an import named it.',
  },
  ImportUploadBlocksMissing: {
    name: 'Invalid',
    doc: 'A commit of an upload written in blocks through the service before every block was staged.',
  },
  ImportUploadTaken: { name: 'Invalid', doc: 'An import naming an upload another import already reads.' },
  ImportFieldsLost: {
    name: 'Invalid',
    doc: "A file import of another system's users that would leave out credentials, identities or roles not named in `from.allow_loss` (`info.fields`); nothing was applied.",
  },
  ImportSourceRefused: {
    name: 'Invalid',
    doc: 'A file import naming a URL it may not read: not https://, user info, or an address that is not public (WEBHOOK_ALLOWED_HOSTS).',
  },
  ImportSourceUnreadable: {
    name: 'Invalid',
    doc: 'A file import naming a URL that answered an error (`info.status`) or gave no size.',
  },
  ImportUploadEmpty: {
    name: 'Invalid',
    doc: 'An import naming an upload to which no file was written (committed).',
  },
  GetUsersInvalidArgument: {
    name: 'Invalid',
    doc: 'A lookup argument that is not a login id key, standard attribute or value the lookup takes.',
  },
  GraphQLDocumentTooLarge: { name: 'Invalid', doc: 'A GraphQL document longer than its byte limit.' },
  GraphQLDepthLimitExceeded: { name: 'Invalid', doc: 'A GraphQL operation nested deeper than its limit.' },
  GraphQLAliasLimitExceeded: {
    name: 'Invalid',
    doc: 'A GraphQL operation with more aliases than its limit.',
  },
  GraphQLCostLimitExceeded: {
    name: 'Invalid',
    doc: 'A GraphQL operation whose cost (fields times their `first`) passes its limit.',
  },
  InvalidCursor: {
    name: 'Invalid',
    doc: 'An `after` cursor that this service did not hand out for this sort.',
  },
  CursorOffsetTooLarge: { name: 'Invalid', doc: 'An offset cursor past the deepest page a search reaches.' },
  SearchKeywordTooLong: { name: 'Invalid', doc: 'A `searchKeyword` longer than its limit.' },
  DuplicatedIdentity: {
    name: 'Invalid',
    doc: 'An import record whose login id or OAuth connection belongs to another user.',
  },
  UserIDConflict: {
    name: 'Invalid',
    doc: "An import record whose `sub` is another user's id, or not the id of the user it matches.",
  },
  RecordRefused: {
    name: 'Invalid',
    doc: 'An import record the database refused (a value out of range, too large for its index); `info.sqlstate`.',
  },
  RoleDuplicateKey: { name: 'Invalid', doc: 'A role created with a key another role has.' },
  GroupDuplicateKey: { name: 'Invalid', doc: 'A group created with a key another group has.' },
  InvalidAdminJWT: {
    name: 'Forbidden',
    doc: 'No admin JWT, or one that does not verify against the admin keys.',
  },
  UnknownHost: { name: 'Forbidden', doc: 'A Host header that does not name this project.' },
  PasswordHashExportNotAllowed: {
    name: 'Forbidden',
    doc: 'An export with `include_password_hashes` in a project that does not allow it.',
  },
  NotFound: { name: 'NotFound', doc: 'A path no endpoint answers.' },
  ChangesCursorExpired: {
    name: 'Gone',
    doc: "A change feed cursor older than CHANGES_RETENTION_SECONDS: events after it may be gone; export again and follow the export's `changes_cursor`.",
  },
  ImportFileGone: {
    name: 'NotFound',
    doc: 'A file import (a replay) whose file is no longer kept (IMPORT_FILE_RETENTION_SECONDS).',
  },
  ImportUploadNotFound: {
    name: 'NotFound',
    doc: "No upload of that id in this project (another project's, or one swept after it expired unused).",
  },
  TaskNotFound: {
    name: 'NotFound',
    doc: "No task of that id in this project, or one past its retention, or another project's.",
  },
  ImportResultsUnavailable: {
    name: 'NotFound',
    doc: 'An import with no results file: still pending, or the service has no blob storage.',
  },
  WebhookEndpointNotFound: {
    name: 'NotFound',
    doc: 'No webhook endpoint of that id in the project configuration.',
  },
  RoleUnknownKeys: { name: 'NotFound', doc: 'An import record naming roles the project lacks; `info.keys`.' },
  GroupUnknownKeys: {
    name: 'NotFound',
    doc: 'An import record naming groups the project lacks; `info.keys`.',
  },
  RequestEntityTooLarge: { name: 'RequestEntityTooLarge', doc: 'A request body over its byte limit.' },
  ImportFileTooLarge: {
    name: 'RequestEntityTooLarge',
    doc: 'An uploaded file larger than IMPORT_FILE_MAX_BYTES (`info.bytes`, `info.limit`).',
  },
  IdempotencyKeyReused: {
    name: 'UnprocessableEntity',
    doc: 'An Idempotency-Key sent before with another request body.',
  },
  ImportUploadsOpen: {
    name: 'TooManyRequest',
    doc: 'A new upload while the project holds IMPORT_UPLOADS_OPEN_LIMIT open ones (`info.limit`); with Retry-After.',
  },
  ImportBacklogFull: {
    name: 'TooManyRequest',
    doc: 'More records of pending imports wait than IMPORT_PENDING_RECORDS_LIMIT; with Retry-After.',
  },
  RateLimited: {
    name: 'TooManyRequest',
    doc: 'The project has used its export tokens (`info.bucket_name`); with Retry-After.',
  },
  MaximumConcurrentJobLimitExceeded: {
    name: 'TooManyRequest',
    doc: 'As many exports run for the project as it may run at once.',
  },
  UnexpectedError: {
    name: 'InternalError',
    doc: 'A fault of the service itself; its detail is in the log only.',
  },
  UserExportDisabled: { name: 'InternalError', doc: 'An export asked of a service with no blob storage.' },
  ImportFilesDisabled: {
    name: 'InternalError',
    doc: 'An upload or a file import asked of a service with no blob storage.',
  },
  TaskNotRecorded: { name: 'InternalError', doc: 'A task the database neither recorded nor found.' },
  TaskExpired: {
    name: 'InternalError',
    doc: 'A task whose workers stopped without a word (their leases lapsed) TASK_MAX_LAPSES times.',
  },
  TaskTimedOut: { name: 'InternalError', doc: 'An export that ran longer than EXPORT_TIME_LIMIT_SECONDS.' },
  Cancelled: {
    name: 'InternalError',
    doc: 'An export the admin cancelled (the failure of a cancelled task).',
  },
  ServiceUnavailable: {
    name: 'ServiceUnavailable',
    doc: 'A dependency (`info.dependency`) is out of reach; with Retry-After.',
  },
  SearchIndexUnavailable: {
    name: 'ServiceUnavailable',
    doc: 'The search index does not answer; with Retry-After.',
  },
  DependencyUnavailable: {
    name: 'ServiceUnavailable',
    doc: 'A task given up after its dependency stayed out of reach for TASK_RETRY_SECONDS.',
  },
} as const satisfies Record<string, ReasonEntry>;

export type ErrorReason = keyof typeof ERROR_REASONS;

/** Whether `text` is a reason of the catalogue. */
export function isErrorReason(text: string): text is ErrorReason {
  return Object.hasOwn(ERROR_REASONS, text);
}
