/**
 * A file an import reads instead of `records` (docs/file-imports.md): an upload of the project's
 * (POST /_api/admin/users/import/uploads) or a URL of the customer's own storage (a signed one),
 * its format, its compression (gzip is also recognised by its first bytes) and, for a CSV, which
 * record member each column fills.
 */
export const importFileMembers = {
  source: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    properties: {
      upload_id: { type: 'string', pattern: '^upload_[A-Z2-7]{32}$' },
      url: { type: 'string', minLength: 1, maxLength: 8192 },
    },
  },
  format: { enum: ['ndjson', 'json', 'csv'] },
  compression: { enum: ['gzip', 'none'] },
  /**
   * Another system's users (docs/file-imports.md): each converted as `userctl import --from` converts
   * it, with the run's mapping; a member the conversion leaves out that carries a credential, an
   * identity or a role ends the import before it applies anything, unless `allow_loss` names it.
   */
  from: {
    type: 'object',
    additionalProperties: false,
    required: ['system'],
    properties: {
      system: { enum: ['auth0', 'firebase', 'cognito', 'clerk', 'keycloak'] },
      /** Firebase's project hash parameters (its scrypt password hashes need them). */
      firebase: {
        type: 'object',
        additionalProperties: false,
        required: ['hash_key', 'salt_separator', 'rounds', 'mem_cost'],
        properties: {
          hash_key: { type: 'string', minLength: 1, maxLength: 1024 },
          salt_separator: { type: 'string', maxLength: 1024 },
          rounds: { type: 'integer', minimum: 1, maximum: 64 },
          mem_cost: { type: 'integer', minimum: 1, maximum: 64 },
        },
      },
      mapping: {
        type: 'object',
        additionalProperties: false,
        properties: {
          providers: {
            type: 'object',
            maxProperties: 100,
            additionalProperties: { type: 'string', maxLength: 256 },
          },
          roles_from: { type: 'string', maxLength: 256 },
          groups_from: { type: 'string', maxLength: 256 },
          attributes: {
            type: 'object',
            maxProperties: 100,
            additionalProperties: { type: 'string', maxLength: 256 },
          },
        },
      },
      allow_loss: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 256 } },
    },
  },
  csv: {
    type: 'object',
    additionalProperties: false,
    required: ['columns'],
    properties: {
      /** Column header -> record member (`address.locality`); `""` leaves the column out. */
      columns: {
        type: 'object',
        maxProperties: 1000,
        propertyNames: { maxLength: 256 },
        additionalProperties: { type: 'string', maxLength: 256 },
      },
    },
  },
} as const;

/**
 * The body of POST /_api/admin/users/import (decisions 2.4): `records`, or a file (importFileMembers).
 * Only the request's shape is checked here; each record is checked by the worker against
 * import-record.schema, so a bad record fails alone.
 */
export const importRequestSchema = {
  $id: 'import-request',
  type: 'object',
  additionalProperties: false,
  required: ['identifier'],
  properties: {
    upsert: { type: 'boolean', default: false },
    /** Validate and plan the records against the current data; write nothing but the details. */
    dry_run: { type: 'boolean' },
    identifier: { enum: ['preferred_username', 'email', 'phone_number'] },
    records: { type: 'array', minItems: 1, items: { type: 'object' } },
    ...importFileMembers,
  },
  dependentRequired: {
    source: ['format'],
    format: ['source'],
    compression: ['source'],
    csv: ['source'],
    from: ['source'],
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
