/**
 * The body of POST /_api/admin/users/import (decisions 2.4). Only the request's shape is checked here;
 * each record is checked by the worker against import-record.schema, so a bad record fails alone.
 */
export const importRequestSchema = {
  $id: 'import-request',
  type: 'object',
  additionalProperties: false,
  required: ['identifier', 'records'],
  properties: {
    upsert: { type: 'boolean', default: false },
    /** Validate and plan the records against the current data; write nothing but the details. */
    dry_run: { type: 'boolean' },
    identifier: { enum: ['preferred_username', 'email', 'phone_number'] },
    records: { type: 'array', minItems: 1, items: { type: 'object' } },
  },
} as const;

/** The outcomes of an import's records, as details and summaries name them; `would_` ones are a dry run's. */
export const importOutcomes = [
  'inserted',
  'updated',
  'skipped',
  'failed',
  'would_insert',
  'would_update',
  'would_skip',
] as const;

export type ImportOutcome = (typeof importOutcomes)[number];
