/**
 * The body of POST /_api/admin/users/export (spec 2.2). A pointer is an RFC 6901 JSON pointer
 * with at least one non-empty reference token (`~` only as `~0` or `~1`).
 */
export const exportRequestSchema = {
  $id: 'export-request',
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { enum: ['csv', 'ndjson'] },
    csv: {
      type: 'object',
      additionalProperties: false,
      properties: {
        fields: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['pointer'],
            properties: {
              pointer: { type: 'string', pattern: '^(/([^~/]|~[01])+)+$' },
              field_name: { type: 'string', minLength: 1 },
            },
          },
        },
      },
    },
  },
} as const;
