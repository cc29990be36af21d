import { common, errorResponse, json, queryParameter, ref, taskFileMembers } from './openapi-helpers.js';

// The task events the service posts to the project's webhook endpoints (OpenAPI 3.1 `webhooks`),
// and the admin routes that show the endpoints and every delivery attempt (docs/webhooks.md).

const time = { type: 'string', format: 'date-time' } as const;

export const webhookSchemas = {
  TaskEvent: {
    type: 'object',
    required: ['id', 'type', 'payload', 'context'],
    description:
      'The body of each delivery attempt, signed in `x-authgear-body-signature` (hex HMAC-SHA256 of the ' +
      'raw body under the endpoint secret). `id` is the same at every attempt (drop repeats); ' +
      '`context.timestamp` is the attempt time (refuse one far from now).',
    properties: {
      id: { type: 'string', format: 'uuid', description: 'The event; the same at every attempt' },
      type: { enum: ['user_import.completed', 'user_export.completed'] },
      payload: ref('TaskEventPayload'),
      context: {
        type: 'object',
        required: ['timestamp'],
        properties: { timestamp: { type: 'integer', description: 'This attempt, in Unix seconds' } },
      },
    },
  },
  UserChangeEvent: {
    type: 'object',
    required: ['id', 'type', 'payload', 'context'],
    description:
      'A change feed event to an endpoint that subscribes to its type, signed and retried as task events are. ' +
      '`id` is derived from the event id (the same at every attempt and every publication); `payload` is the event as ' +
      'the HTTP feed writes it, with its `project_id`.',
    properties: {
      id: { type: 'string', format: 'uuid' },
      type: { enum: ['user.created', 'user.updated', 'user.deleted'] },
      payload: {
        allOf: [
          ref('ChangeEvent'),
          { type: 'object', required: ['project_id'], properties: { project_id: { type: 'string' } } },
        ],
      },
      context: {
        type: 'object',
        required: ['timestamp'],
        properties: { timestamp: { type: 'integer', description: 'This attempt, in Unix seconds' } },
      },
    },
  },
  TaskEventPayload: {
    type: 'object',
    required: ['task_id', 'created_at', 'completed_at'],
    description: 'The task as its status read shows it once completed (absent values left out)',
    properties: {
      task_id: { type: 'string' },
      replay_of: { type: 'string', description: 'Import: the import this one replayed' },
      created_at: time,
      completed_at: time,
      failed_at: { ...time, description: 'The task could not finish: `error` says why' },
      error: ref('Error'),
      summary: { type: 'object', description: 'Import: the summary of its status read' },
      ...taskFileMembers,
    },
  },
  WebhookEndpoint: {
    type: 'object',
    required: ['id', 'url', 'events'],
    properties: {
      id: { type: 'string' },
      url: { type: 'string', description: 'Without user info, query or fragment' },
      events: { type: 'array', items: { type: 'string' } },
      disabled_at: { ...time, description: 'When it answered 410 Gone; absent while enabled' },
    },
  },
  WebhookDelivery: {
    type: 'object',
    required: [
      'id',
      'event_id',
      'event_type',
      'task_id',
      'endpoint',
      'url',
      'attempt',
      'started_at',
      'outcome',
    ],
    properties: {
      id: { type: 'string', description: 'The attempt; `after` takes it' },
      event_id: { type: 'string', format: 'uuid' },
      event_type: { type: 'string' },
      task_id: { type: 'string' },
      endpoint: { type: 'string' },
      url: { type: 'string' },
      attempt: { type: 'integer', description: '1 for the first attempt at this event and endpoint' },
      started_at: time,
      duration_ms: { type: 'integer' },
      status_code: { type: 'integer', description: 'What the endpoint answered' },
      error: { type: 'string', description: 'Why there was no answer (ECONNREFUSED, a timeout)' },
      outcome: {
        enum: ['delivered', 'retry', 'failed', 'disabled', 'unfinished'],
        description:
          'delivered (2xx); retry (another attempt follows); failed (given up); disabled (410); ' +
          'unfinished (in flight, or its worker died: the next attempt follows its lease)',
      },
    },
  },
} as const;

const endpointId = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;

export const webhookPaths = {
  '/_api/admin/webhooks/endpoints': {
    get: {
      summary: "The project's webhook endpoints (never their secrets), and which a 410 disabled",
      responses: {
        '200': {
          description: 'The endpoints of the project configuration',
          content: json({
            type: 'object',
            required: ['endpoints'],
            properties: { endpoints: { type: 'array', items: ref('WebhookEndpoint') } },
          }),
        },
        ...common,
      },
    },
  },
  '/_api/admin/webhooks/endpoints/{id}/enable': {
    post: {
      summary: 'Enable an endpoint a 410 disabled: events from now on go to it',
      parameters: [endpointId],
      responses: {
        '200': { description: 'The endpoint', content: json(ref('WebhookEndpoint')) },
        '404': errorResponse('No such endpoint (WebhookEndpointNotFound)'),
        ...common,
      },
    },
  },
  '/_api/admin/webhooks/deliveries': {
    get: {
      summary: 'Every delivery attempt of the project, newest first, a page at a time',
      parameters: [
        queryParameter('endpoint', 'Only the attempts to this endpoint', { type: 'string' }),
        queryParameter('task_id', "Only the attempts at this task's event", { type: 'string' }),
        queryParameter('event_id', 'Only the attempts at this event', { type: 'string', format: 'uuid' }),
        queryParameter('limit', 'Attempts to show at most (50 when not given)', {
          type: 'integer',
          minimum: 1,
          maximum: 200,
        }),
        queryParameter('after', 'The cursor of the page before, as its `next` carries it', {
          type: 'string',
        }),
      ],
      responses: {
        '200': {
          description: 'A page of attempts, and `next`, the path of the next page, when more follow',
          content: json({
            type: 'object',
            required: ['deliveries'],
            properties: {
              deliveries: { type: 'array', items: ref('WebhookDelivery') },
              next: { type: 'string' },
            },
          }),
        },
        '400': errorResponse('A malformed query (Invalid/BadRequest)'),
        ...common,
      },
    },
  },
} as const;

/** What the endpoints receive: one POST per attempt, retried until a 2xx, a 410, or 24 h. */
const event = (type: string, what: string, body = 'TaskEvent') => ({
  post: {
    summary: `${type}: ${what}`,
    security: [],
    parameters: [
      {
        name: 'x-authgear-body-signature',
        in: 'header',
        required: true,
        description: 'Hex HMAC-SHA256 of the raw body, keyed by the endpoint secret',
        schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      },
    ],
    requestBody: { required: true, content: json(ref(body)) },
    responses: {
      '2XX': { description: 'Delivered' },
      '410': { description: 'The endpoint is disabled until an admin enables it again' },
      default: {
        description:
          'Tried again: after 10 s, doubled for each attempt after it up to 1 h, for 24 h after the event',
      },
    },
  },
});

export const webhooks = {
  'user_import.completed': event('user_import.completed', 'an import task completed (or failed)'),
  'user_export.completed': event('user_export.completed', 'an export task completed (or failed)'),
  'user.created': event(
    'user.created',
    'a change feed event: a user was created (docs/changes.md)',
    'UserChangeEvent',
  ),
  'user.updated': event('user.updated', 'a change feed event: a user was changed', 'UserChangeEvent'),
  'user.deleted': event('user.deleted', 'a change feed event: a user was deleted', 'UserChangeEvent'),
} as const;
