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
