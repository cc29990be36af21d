import { importFileMembers, importRequestSchema } from './import-request.schema.js';

/**
 * The message of the task bus: which task has work to do, and for an import the whole request (its
 * records, or the file it reads), so that the import topic is the durable log of imports (a replay
 * reads it back). The records' secret members are sealed as one list (docs/decisions.md, Tasks);
 * each record is checked by the worker. Keyed by task id on Kafka. An import's text carries
 * `request.records` as lines after the rest of the message (`pipeline/bus/task-message.ts`); this
 * schema checks the message with its records put back.
 */
export const taskMessageSchema = {
  $id: 'task-message',
  type: 'object',
  additionalProperties: false,
  required: ['task_id', 'kind'],
  properties: {
    task_id: { type: 'string', pattern: '^user(import|export)_[A-Z2-7]{32}$' },
    kind: { enum: ['import', 'export'] },
    project_id: { type: 'string', minLength: 1 },
    /** The part of a split export (or file import) this message asks a worker to write (apply). */
    part: { type: 'integer', minimum: 0 },
    /** Export: the blob the split export's attempt writes, which names its parts. */
    blob: { type: 'string', minLength: 1, maxLength: 1024 },
    /** Import: the task whose logged message this one was replayed from. */
    replay_of: { type: 'string', pattern: '^userimport_[A-Z2-7]{32}$' },
    request: {
      type: 'object',
      additionalProperties: false,
      required: ['identifier', 'upsert'],
      properties: {
        identifier: importRequestSchema.properties.identifier,
        upsert: { type: 'boolean' },
        dry_run: { type: 'boolean' },
        /** The records' secrets, sealed as one list; each secret member of a record is its position. */
        secrets: { type: 'string', minLength: 1 },
        records: importRequestSchema.properties.records,
        /** A file import's file: its upload, and how it is read. */
        ...importFileMembers,
      },
      dependentRequired: { source: ['format'] },
    },
  },
  // An import's own message carries its request; a part's message only wakes a worker.
  if: { properties: { kind: { const: 'import' }, part: false } },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
  then: { properties: { project_id: true, request: true }, required: ['project_id', 'request'] },
} as const;
