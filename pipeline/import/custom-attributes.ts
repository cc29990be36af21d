import type { ValidateFunction } from 'ajv/dist/2020.js';
import { contractAjv } from '../../schemas/index.js';
import type { ProjectConfig } from '../config.js';
import { EngineError } from '../errors.js';
import { normalizeEmail, normalizePhone } from '../identity/normalize.js';

/** A custom attribute as the project declares it. */
export interface DeclaredAttribute {
  readonly type: string;
  readonly enum?: readonly string[];
}

/** Why a value does not fit its declared attribute, or undefined when it does. */
export type AttributeCheck = (value: unknown) => string | undefined;

// The formats of the declared types, as the rest of the service reads them.
const ajv = contractAjv
  .addFormat('attribute-email', (v: string) => normalizeEmail(v, true).ok)
  .addFormat('attribute-e164', (v: string) => normalizePhone(v).ok)
  .addFormat('attribute-url', (v: string) => URL.canParse(v));

/** The JSON Schema of each declared type, and the message of a value that does not fit it. */
const TYPES: Readonly<Record<string, (d: DeclaredAttribute) => { schema: object; message: string }>> = {
  string: () => ({ schema: { type: 'string' }, message: 'must be a string' }),
  number: () => ({ schema: { type: 'number' }, message: 'must be a number' }),
  integer: () => ({ schema: { type: 'integer' }, message: 'must be an integer' }),
  boolean: () => ({ schema: { type: 'boolean' }, message: 'must be a boolean' }),
  enum: (d) => ({ schema: { enum: d.enum ?? [] }, message: `must be one of ${(d.enum ?? []).join(', ')}` }),
  email: () => ({
    schema: { type: 'string', format: 'attribute-email' },
    message: 'must be an email address',
  }),
  phone_number: () => ({
    schema: { type: 'string', format: 'attribute-e164' },
    message: 'must be a phone number in E.164 format',
  }),
  url: () => ({ schema: { type: 'string', format: 'attribute-url' }, message: 'must be a URL' }),
  country_code: () => ({
    schema: { type: 'string', pattern: '^[A-Z]{2}$' },
    message: 'must be an ISO 3166-1 alpha-2 code',
  }),
};

const compiled = new WeakMap<ProjectConfig['customAttributes'], ReadonlyMap<string, AttributeCheck>>();

/**
 * A check per custom attribute the project declares, each an ajv validator compiled from the
 * declaration (once per configuration: every import of the project reuses them).
 */
export function customAttributeChecks(
  declared: ProjectConfig['customAttributes'],
): ReadonlyMap<string, AttributeCheck> {
  let checks = compiled.get(declared);
  if (!checks) {
    checks = new Map(
      [...declared].map(([name, attribute]) => {
        const type = TYPES[attribute.type];
        if (!type)
          throw new EngineError(
            'CustomAttributeTypeUnknown',
            `custom attribute ${name} has an unknown type ${attribute.type}`,
          );
        const { schema, message } = type(attribute);
        const validate: ValidateFunction = ajv.compile(schema);
        return [name, (value: unknown) => (validate(value) ? undefined : message)];
      }),
    );
    compiled.set(declared, checks);
  }
  return checks;
}
