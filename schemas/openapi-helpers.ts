// The pieces the OpenAPI document is written with.

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ 'application/json': { schema } });
export const errorResponse = (description: string) => ({ description, content: json(ref('ErrorEnvelope')) });
/** An optional query parameter. */
export const queryParameter = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

/** The answers every admin route may give. */
export const common = {
  '403': errorResponse('No valid admin JWT (Forbidden/InvalidAdminJWT)'),
  '503': errorResponse('A dependency is down (ServiceUnavailable), with Retry-After'),
};

/** What proves a task's file whole, as its status read and its event name it. */
export const taskFileMembers = {
  record_count: { type: 'integer', description: 'Export: the records (users) the file holds' },
  file_bytes: { type: 'integer', description: 'Export: the size of the file, in bytes' },
  file_sha256: { type: 'string', description: 'Export: the SHA-256 of the file, in hex' },
  results_bytes: { type: 'integer', description: 'Import: the size of the results file, in bytes' },
  results_sha256: { type: 'string', description: 'Import: the SHA-256 of the results file, in hex' },
} as const;
