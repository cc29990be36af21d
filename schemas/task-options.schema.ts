import { exportRequestSchema } from './export-request.schema.js';
import { importFileMembers, importRequestSchema } from './import-request.schema.js';

// The settings a task row keeps (`tasks.options`), written when the task is accepted and read back
// through these schemas by the worker that runs it. Their members are named as the request's are.

const { format, compression, created_after, updated_since, disabled } = exportRequestSchema.properties;

/** An export task's settings: its format, its columns (names derived), filters and options. */
export const exportTaskOptionsSchema = {
  $id: 'export-task-options',
  type: 'object',
  additionalProperties: false,
  required: ['format', 'fields'],
  properties: {
    format,
    compression,
    /** CSV columns in order, each with its name (ndjson: none). */
    fields: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['pointer', 'field_name'],
        properties: { pointer: { type: 'string' }, field_name: { type: 'string' } },
      },
    },
    escape_formulas: { type: 'boolean' },
    include_password_hashes: { type: 'boolean' },
    filters: {
      type: 'object',
      additionalProperties: false,
      properties: { created_after, updated_since, disabled },
    },
  },
} as const;

/** An import task's settings (its records travel in its message). */
export const importTaskOptionsSchema = {
  $id: 'import-task-options',
  type: 'object',
  additionalProperties: false,
  required: ['identifier', 'upsert'],
  properties: {
    identifier: importRequestSchema.properties.identifier,
    upsert: { type: 'boolean' },
    dry_run: { type: 'boolean' },
  },
} as const;

/**
 * How a file import reads its file (`import_files.source`), fixed when the import is accepted:
 * the format, the compression (named, or found by the file's first bytes), a CSV's columns, the
 * file's size, and where it is: the snapshot of its upload the import reads (a later write to the
 * upload changes nothing), or the URL it was named by, sealed (a signed URL is a credential).
 */
export const importFileSourceSchema = {
  $id: 'import-file-source',
  type: 'object',
  additionalProperties: false,
  required: ['format', 'compression', 'bytes'],
  properties: {
    format: importFileMembers.format,
    compression: importFileMembers.compression,
    columns: importFileMembers.csv.properties.columns,
    from: importFileMembers.from,
    bytes: { type: 'integer', minimum: 0 },
    snapshot: { type: 'string', minLength: 1 },
    sealed_url: { type: 'string', minLength: 1 },
  },
} as const;
