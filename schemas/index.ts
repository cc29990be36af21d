import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FromSchema } from 'json-schema-to-ts';
import { configSchema } from './config.schema.js';
import { taskMessageSchema } from './task-message.schema.js';

export { configSchema, taskMessageSchema };

/** The validated configuration, as the schema describes it after defaults are applied. */
export type ConfigDocument = FromSchema<typeof configSchema, { references: [typeof configSchema] }>;
export type ProjectConfigDocument = ConfigDocument['project'];
export type TaskMessage = FromSchema<typeof taskMessageSchema>;
export type TaskKind = TaskMessage['kind'];

/** One place-value pair of a schema failure, as DECISIONS.md names them: location, kind, details. */
export interface SchemaCause {
  location: string;
  kind: string;
  details: Record<string, unknown>;
}

/** Turns ajv's error list into the `causes` of an Invalid/ValidationFailed error. */
export function schemaCauses(validate: ValidateFunction): SchemaCause[] {
  return (validate.errors ?? []).map((e) => ({
    location: e.instancePath,
    kind: e.keyword,
    details: { ...e.params, message: e.message ?? e.keyword },
  }));
}

// Environment values are strings; the config validator alone coerces them ("3000" -> 3000).
const configAjv = new Ajv2020({ allErrors: true, useDefaults: true, coerceTypes: true, strict: true });

/** Validates (and fills the defaults of) a raw configuration document. */
export const validateConfig = configAjv.compile<ConfigDocument>(configSchema);

const contractAjv = new Ajv2020({ allErrors: true, strict: true });

/** Validates a message read from the task bus. */
export const validateTaskMessage = contractAjv.compile<TaskMessage>(taskMessageSchema);
