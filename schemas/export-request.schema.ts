/**
 * The body of POST /_api/admin/users/export (decisions 2.2). A pointer is an RFC 6901 JSON pointer
 * with at least one non-empty reference token (`~` only as `~0` or `~1`).
 */
export const exportRequestSchema = {
  $id: 'export-request',
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { enum: ['csv', 'ndjson'] },
    // The file gzip-compressed (`.csv.gz`, `.ndjson.gz`); absent: as is.
    compression: { enum: ['gzip'] },
    // Only users created after, or updated since, this time (RFC 3339 with an offset); only
    // disabled (true) or enabled (false) users.
    created_after: { type: 'string', format: 'date-time' },
    updated_since: { type: 'string', format: 'date-time' },
    disabled: { type: 'boolean' },
    // ndjson records with `password` and `mfa.password` as stored, when the project allows it
    // (project.password_hashes.export_allowed): a move between projects keeps the passwords.
    include_password_hashes: { type: 'boolean' },
    csv: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // A cell starting with =, +, -, @, tab or carriage return gets a leading ' (OWASP), so a
        // spreadsheet shows it as text instead of running it as a formula.
        escape_formulas: { type: 'boolean', default: false },
        fields: {
          type: 'array',
          minItems: 1,
          // A bound on the file's width and on the work one export may hold the slot for.
          maxItems: 200,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['pointer'],
            properties: {
              pointer: { type: 'string', maxLength: 512, pattern: '^(/([^~/]|~[01])+)+$' },
              field_name: { type: 'string', minLength: 1, maxLength: 256 },
            },
          },
        },
      },
    },
  },
} as const;
