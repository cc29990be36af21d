import { ERROR_NAMES, ERROR_REASONS } from './error-reasons.js';
import { exportRequestSchema } from './export-request.schema.js';
import { importRecordSchema } from './import-record.schema.js';
import { importOutcomes, importRequestSchema } from './import-request.schema.js';
import { common, errorResponse, json, queryParameter, ref, taskFileMembers } from './openapi-helpers.js';
import { webhookPaths, webhookSchemas, webhooks } from './webhooks.openapi.js';

// The OpenAPI 3.1 document of the REST endpoints, built from the JSON Schemas of this folder (3.1
// speaks JSON Schema 2020-12, so they go in as they are). `npm run contracts` writes it to
// schemas/openapi.json, which is checked in; the service serves it at /_api/admin/openapi.json.

/** A schema as a component: its `$id` (a base for ajv) left out of the document. */
function component<T extends { $id: string }>({ $id: _id, ...schema }: T): Omit<T, '$id'> {
  return schema;
}

/** The query parameters of both task lists. */
const listParameters = [
  queryParameter('status', 'Only the tasks in this state (`failed`: completed with `failed_at`)', {
    enum: ['pending', 'completed', 'failed'],
  }),
  queryParameter('limit', 'Tasks to show at most (50 when not given)', {
    type: 'integer',
    minimum: 1,
    maximum: 200,
  }),
  queryParameter('after', 'The cursor of the page before, as its `next` carries it', { type: 'string' }),
];

const taskId = (prefix: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: `^${prefix}_[A-Z2-7]{32}$` },
});

/** The Idempotency-Key header of both initiate calls. */
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Sent again with the same key and body, the request answers the task the first one created; ' +
    'with another body it is refused (422)',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,200}$' },
} as const;

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'User import, export and lookup: admin API',
    version: '0.1.0',
    description:
      'Bulk user export, bulk user import and exact-match lookup of an identity project. Every admin ' +
      'route takes `Authorization: Bearer <admin JWT>` and a Host naming the project domain; the import ' +
      'routes require HTTPS. Every bound (body sizes, pages of details, GraphQL depth, aliases and cost) ' +
      'and the error that names it: README, Limits.',
  },
  components: {
    securitySchemes: { adminJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    schemas: {
      ImportRequest: component(importRequestSchema),
      ImportRecord: component(importRecordSchema),
      ExportRequest: component(exportRequestSchema),
      CreatedTask: {
        type: 'object',
        required: ['id', 'created_at', 'status'],
        properties: {
          id: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          status: { enum: ['pending', 'completed'] },
        },
      },
      TaskStatus: {
        type: 'object',
        required: ['id', 'created_at', 'status'],
        properties: {
          id: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          status: { enum: ['pending', 'completed'] },
          completed_at: { type: 'string', format: 'date-time' },
          failed_at: { type: 'string', format: 'date-time' },
          error: ref('Error'),
          progress: {
            type: 'object',
            properties: {
              processed: { type: 'integer' },
              total: {
                type: 'integer',
                description:
                  'A file import: 0 until its whole file is taken in, then its record count. An export split into parts: 0 until its parts are planned, then its user count',
              },
              bytes_read: { type: 'integer', description: 'A file import: bytes of its upload taken in' },
              bytes_total: { type: 'integer', description: "A file import: its upload's size in bytes" },
              records_per_second: {
                type: 'integer',
                description:
                  'A file import applying its records: records applied per second since it started',
              },
              seconds_left: {
                type: 'integer',
                description: 'A file import applying its records: seconds left at that rate',
              },
            },
          },
          replay_of: { type: 'string', description: 'The import task this one was replayed from' },
          idempotency_key: {
            type: 'string',
            description: 'The Idempotency-Key the task was asked for with, when the request carried one',
          },
          summary: {
            type: 'object',
            properties: Object.fromEntries(
              [
                'total',
                'inserted',
                'updated',
                'skipped',
                'failed',
                'warnings',
                'would_insert',
                'would_update',
                'would_skip',
              ].map((k) => [k, { type: 'integer' }]),
            ),
          },
          details: {
            type: 'array',
            items: {
              type: 'object',
              required: ['index', 'outcome', 'record'],
              properties: {
                index: { type: 'integer' },
                line: {
                  type: 'integer',
                  description:
                    "A file import's record of an ndjson or CSV file: its line in the file, from 1",
                },
                outcome: { enum: importOutcomes },
                user_id: { type: 'string', format: 'uuid' },
                record: { type: 'object' },
                warnings: { type: 'array', items: { type: 'object' } },
                errors: { type: 'array', items: ref('Error') },
              },
            },
          },
          details_next: {
            type: 'string',
            description:
              'Import: the path of the next page of details, when more follow (a page holds 1,000 by default, `limit` at most 10,000)',
          },
          download_url: { type: 'string', format: 'uri' },
          changes_cursor: {
            type: 'string',
            description:
              "Export, once completed: the change feed's position at the export's snapshot; every change committed after the snapshot follows it, none before (docs/changes.md)",
          },
          ...taskFileMembers,
          results_url: {
            type: 'string',
            format: 'uri',
            description:
              'Import, once completed (where blob storage is configured): a fresh signed URL, valid 60 s ' +
              '(EXPORT_DOWNLOAD_URL_SECONDS), of the results file: one JSON line per record, in request ' +
              'order, each the detail a status read shows (secrets redacted); kept as long as the task',
          },
        },
      },
      ChangeEvent: {
        type: 'object',
        required: ['id', 'type', 'user_id', 'occurred_at'],
        properties: {
          id: {
            type: 'string',
            description: 'Stable across reads and readers: `<transaction id>-<user id>`',
          },
          type: { enum: ['user.created', 'user.updated', 'user.deleted'] },
          user_id: { type: 'string', format: 'uuid' },
          occurred_at: {
            type: 'string',
            format: 'date-time',
            description: "When the change's statement ran",
          },
          record: {
            type: 'object',
            description:
              'The user as the ndjson export writes it, read with the event (so it holds this change and any committed before the read); absent for a deletion',
          },
        },
      },
      TaskList: {
        type: 'object',
        required: ['tasks'],
        properties: {
          tasks: {
            type: 'array',
            description: 'Newest first, each as its status read shows it (an import without its details)',
            items: ref('TaskStatus'),
          },
          next: { type: 'string', description: 'The path of the next page, when more follow' },
        },
      },
      Error: {
        type: 'object',
        required: ['name', 'reason', 'message', 'code'],
        properties: {
          name: { enum: Object.keys(ERROR_NAMES), description: 'Fixes the HTTP status (`code`)' },
          reason: {
            enum: Object.keys(ERROR_REASONS),
            description: Object.entries(ERROR_REASONS)
              .map(([reason, { name, doc }]) => `- \`${reason}\` (${name}): ${doc}`)
              .join('\n'),
          },
          message: { type: 'string' },
          code: { type: 'integer' },
          info: { type: 'object' },
        },
      },
      ErrorEnvelope: { type: 'object', required: ['error'], properties: { error: ref('Error') } },
      ImportError: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'string', description: 'What is wrong with the request' } },
      },
      ...webhookSchemas,
    },
  },
  security: [{ adminJwt: [] }],
  paths: {
    '/_api/admin/users/import': {
      get: {
        summary: "List the project's import tasks, newest first, a page at a time (HTTPS only)",
        parameters: listParameters,
        responses: {
          '200': { description: 'A page of tasks', content: json(ref('TaskList')) },
          '400': { description: 'A malformed query, or not HTTPS', content: json(ref('ImportError')) },
          ...common,
        },
      },
      post: {
        summary:
          'Start an import of `records`, or of an uploaded file named by `source` (HTTPS only; body at most 500000 bytes)',
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json(ref('ImportRequest')) },
        responses: {
          '200': { description: 'The pending task', content: json(ref('CreatedTask')) },
          '400': {
            description:
              'A malformed request, or not HTTPS (ImportError); a file import whose upload expired unused, was never written, or another import reads (ImportUploadExpired, ImportUploadEmpty, ImportUploadTaken)',
            content: json({ oneOf: [ref('ImportError'), ref('ErrorEnvelope')] }),
          },
          '404': errorResponse(
            "A file import's upload that this project does not have (ImportUploadNotFound)",
          ),
          '413': {
            description:
              'Body over 500000 bytes (ImportError); an uploaded file over IMPORT_FILE_MAX_BYTES (ImportFileTooLarge)',
            content: json({ oneOf: [ref('ImportError'), ref('ErrorEnvelope')] }),
          },
          '422': errorResponse('The Idempotency-Key came with another body (IdempotencyKeyReused)'),
          '429': errorResponse('Too many records of pending imports (ImportBacklogFull), with Retry-After'),
          ...common,
        },
      },
    },
    '/_api/admin/users/import/uploads': {
      post: {
        summary:
          'An upload for a file import (HTTPS only; no body): the id an import names as `source.upload_id`, and a signed URL that can create and write its blob only, until `expires_at` (IMPORT_UPLOAD_SECONDS)',
        responses: {
          '200': {
            description: 'The upload',
            content: json({
              type: 'object',
              required: ['upload_id', 'upload_url', 'expires_at'],
              properties: {
                upload_id: { type: 'string', pattern: '^upload_[A-Z2-7]{32}$' },
                upload_url: {
                  type: 'string',
                  format: 'uri',
                  description:
                    'Write the file here with any Azure blob client, at once or in blocks (resumable)',
                },
                expires_at: { type: 'string', format: 'date-time' },
              },
            }),
          },
          '400': { description: 'Not HTTPS', content: json(ref('ImportError')) },
          '429': errorResponse(
            'The project holds IMPORT_UPLOADS_OPEN_LIMIT open uploads (ImportUploadsOpen), with Retry-After',
          ),
          '500': errorResponse('The service has no blob storage (ImportFilesDisabled)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/import/uploads/{id}/blocks/{n}': {
      put: {
        summary:
          'Write block n (from 0) of an open upload through the service, for a client that cannot reach the blob store (the console); at most 8 MiB a block, 50,000 blocks (HTTPS only)',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'n', in: 'path', required: true, schema: { type: 'integer', minimum: 0, maximum: 49999 } },
        ],
        requestBody: {
          required: true,
          content: { 'application/octet-stream': { schema: { type: 'string' } } },
        },
        responses: {
          '204': { description: 'The block is staged' },
          '400': errorResponse(
            'A malformed id or block number (BadRequest); the upload expired or an import reads it (ImportUploadExpired, ImportUploadTaken)',
          ),
          '404': errorResponse('No such upload in this project (ImportUploadNotFound)'),
          '413': errorResponse('A block over 8 MiB (RequestEntityTooLarge)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/import/uploads/{id}/commit': {
      post: {
        summary: "Commit blocks 0..blocks-1 written through the service as the upload's file (HTTPS only)",
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['blocks'],
            properties: { blocks: { type: 'integer', minimum: 1, maximum: 50000 } },
          }),
        },
        responses: {
          '204': { description: 'The upload holds the file' },
          '400': errorResponse(
            'A block missing (ImportUploadBlocksMissing), a malformed body (ValidationFailed); the upload expired or an import reads it',
          ),
          '404': errorResponse('No such upload in this project (ImportUploadNotFound)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/import/{id}': {
      get: {
        summary: 'Read an import task: progress, then summary and details',
        parameters: [
          taskId('userimport'),
          queryParameter('outcome', 'Only the details of this outcome', {
            enum: importOutcomes,
          }),
          queryParameter('offset', 'Details to pass over (in request order)', {
            type: 'integer',
            minimum: 0,
          }),
          queryParameter('limit', 'Details to show at most', {
            type: 'integer',
            minimum: 1,
            maximum: 10000,
          }),
          queryParameter('details', 'false: no details at all', { enum: ['true', 'false'] }),
        ],
        responses: {
          '200': { description: 'The task', content: json(ref('TaskStatus')) },
          '400': { description: 'A malformed task id or query', content: json(ref('ImportError')) },
          '404': errorResponse('No such task (TaskNotFound)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/import/{id}/results': {
      get: {
        summary:
          "A completed import's results file, through the API (HTTPS only): one JSON line per record, in request order",
        parameters: [taskId('userimport')],
        responses: {
          '200': {
            description: 'Each line the detail a status read shows',
            content: { 'application/x-ndjson': { schema: { type: 'string' } } },
          },
          '400': { description: 'A malformed task id, or not HTTPS', content: json(ref('ImportError')) },
          '404': errorResponse('No such task (TaskNotFound), or no results file (ImportResultsUnavailable)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/export': {
      get: {
        summary: "List the project's export tasks, newest first, a page at a time",
        parameters: listParameters,
        responses: {
          '200': { description: 'A page of tasks', content: json(ref('TaskList')) },
          '400': errorResponse('A malformed query (Invalid/BadRequest)'),
          '500': errorResponse('Export is disabled (UserExportDisabled)'),
          ...common,
        },
      },
      post: {
        summary: 'Start an export',
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json(ref('ExportRequest')) },
        responses: {
          '200': { description: 'The pending task', content: json(ref('CreatedTask')) },
          '400': errorResponse(
            'An invalid request (Invalid/ValidationFailed, UserExportNonUniqueFieldNames)',
          ),
          '422': errorResponse('The Idempotency-Key came with another body (IdempotencyKeyReused)'),
          '429': errorResponse('An export is running, or the UserExport rate limit is reached'),
          '500': errorResponse('Export is disabled (UserExportDisabled)'),
          ...common,
          '403': errorResponse(
            'No valid admin JWT (Forbidden/InvalidAdminJWT), or include_password_hashes while the project does not allow it (PasswordHashExportNotAllowed)',
          ),
        },
      },
    },
    '/_api/admin/users/export/{id}': {
      get: {
        summary: 'Read an export task: progress, then a fresh signed download_url',
        parameters: [taskId('userexport')],
        responses: {
          '200': { description: 'The task', content: json(ref('TaskStatus')) },
          '404': errorResponse('No such task (TaskNotFound)'),
          ...common,
        },
      },
      delete: {
        summary: 'Cancel a pending export (it ends Cancelled)',
        parameters: [taskId('userexport')],
        responses: {
          '200': { description: 'The task, completed', content: json(ref('TaskStatus')) },
          '404': errorResponse('No such task (TaskNotFound)'),
          ...common,
        },
      },
    },
    '/_api/admin/users/changes': {
      get: {
        summary:
          "The project's change feed (docs/changes.md): every committed change to a user after a cursor, " +
          'as a page (a long poll) or, with Accept: text/event-stream, as Server-Sent Events whose ids are cursors',
        parameters: [
          queryParameter(
            'after',
            "A cursor: an export's changes_cursor, a page's next_cursor or an event's SSE id (also read from Last-Event-ID); absent: answered at once, no events and the cursor of the feed's end",
            { type: 'string' },
          ),
          queryParameter('limit', 'Events per page, from 1 to 1,000 (default 100)', {
            type: 'integer',
            minimum: 1,
            maximum: 1000,
          }),
          queryParameter('wait', 'Seconds to wait for an event when there is none, 0 to 30 (default 5)', {
            type: 'integer',
            minimum: 0,
            maximum: 30,
          }),
        ],
        responses: {
          '200': {
            description:
              'The events after the cursor, in feed order (events of one user in the order of their commits), and the cursor after them',
            content: {
              ...json({
                type: 'object',
                required: ['events', 'next_cursor'],
                properties: {
                  events: { type: 'array', items: ref('ChangeEvent') },
                  next_cursor: { type: 'string' },
                },
              }),
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'Events `id: <cursor>`, `event: <type>`, `data: <ChangeEvent>`; a response lasts 60 s, and the client resumes with Last-Event-ID',
                },
              },
            },
          },
          '400': errorResponse(
            'A cursor this service did not hand out (ChangesCursorInvalid), or a bad limit or wait (BadRequest)',
          ),
          '410': errorResponse(
            'A cursor older than CHANGES_RETENTION_SECONDS (ChangesCursorExpired): export again and follow its changes_cursor',
          ),
          ...common,
        },
      },
    },
    ...webhookPaths,
    '/_api/admin/graphql': {
      get: {
        summary: 'GraphQL over HTTP (queries): the lookups; the schema is schemas/admin.graphql',
        parameters: [{ name: 'query', in: 'query', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'A GraphQL response' }, ...common },
      },
      post: {
        summary: 'GraphQL over HTTP: the lookups and the role and group mutations',
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['query'],
            properties: {
              query: { type: 'string' },
              variables: { type: 'object' },
              operationName: { type: 'string' },
            },
          }),
        },
        responses: { '200': { description: 'A GraphQL response' }, ...common },
      },
    },
    '/console': {
      get: {
        summary: 'The web console (docs/console.md), at /console/ (/console redirects there)',
        security: [],
        responses: {
          '200': { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
    '/console/{file}': {
      get: {
        summary: "The console's script (console.js) and stylesheet (console.css)",
        security: [],
        parameters: [
          { name: 'file', in: 'path', required: true, schema: { enum: ['console.js', 'console.css'] } },
        ],
        responses: {
          '200': { description: 'The file' },
          '404': errorResponse('No such file, or the console is not built (NotFound)'),
        },
      },
    },
    '/console/project.json': {
      get: {
        summary: "What the console offers: the project's declared custom attributes",
        responses: {
          '200': {
            description: 'The declared custom attributes, in the order the project declares them',
            content: json({
              type: 'object',
              required: ['custom_attributes'],
              properties: {
                custom_attributes: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['name', 'type'],
                    properties: { name: { type: 'string' }, type: { type: 'string' } },
                  },
                },
              },
            }),
          },
          ...common,
        },
      },
    },
    '/console/development-token': {
      post: {
        summary:
          'The development sign-in: an admin JWT from the development key, only where that key signs admin tokens and only to this machine',
        security: [],
        responses: {
          '200': {
            description: 'A token valid one hour',
            content: json({ type: 'object', properties: { token: { type: 'string' } } }),
          },
          '403': errorResponse('Not from this machine (InvalidAdminJWT)'),
          '404': errorResponse('No development sign-in here (NotFound)'),
        },
      },
    },
    '/_api/admin/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'The OpenAPI document', content: json({ type: 'object' }) } },
      },
    },
  },
  webhooks,
} as const;
