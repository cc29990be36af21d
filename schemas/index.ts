import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FromSchema } from 'json-schema-to-ts';
import { configSchema } from './config.schema.js';
import { contractFormats } from './date-time.js';
import { exportRequestSchema } from './export-request.schema.js';
import { importRecordSchema, passwordTypes } from './import-record.schema.js';
import { type ImportOutcome, importOutcomes, importRequestSchema } from './import-request.schema.js';
import { taskMessageSchema } from './task-message.schema.js';
import {
  exportTaskOptionsSchema,
  importFileSourceSchema,
  importTaskOptionsSchema,
} from './task-options.schema.js';

export {
  configSchema,
  exportRequestSchema,
  type ImportOutcome,
  importOutcomes,
  importRecordSchema,
  importRequestSchema,
  passwordTypes,
  taskMessageSchema,
};

/** The validated configuration, as the schema describes it after defaults are applied. */
export type ConfigDocument = FromSchema<typeof configSchema, { references: [typeof configSchema] }>;
export type ProjectConfigDocument = ConfigDocument['project'];
export type TaskMessage = FromSchema<typeof taskMessageSchema>;
export type TaskKind = TaskMessage['kind'];
/** Every kind of task, as the bus message names them. */
export const TASK_KINDS: readonly TaskKind[] = taskMessageSchema.properties.kind.enum;
export type ExportRequest = FromSchema<typeof exportRequestSchema>;
export type ExportFormat = ExportRequest['format'];
export type ImportRequest = FromSchema<typeof importRequestSchema>;
export type ImportIdentifier = ImportRequest['identifier'];
/** An import record that passed its schema. */
export type ImportRecord = FromSchema<typeof importRecordSchema>;
export type PasswordType = (typeof passwordTypes)[number];
/** The settings an export task row keeps. */
export type ExportTaskOptions = FromSchema<typeof exportTaskOptionsSchema>;
/** The settings an import task row keeps. */
export type ImportTaskOptions = FromSchema<typeof importTaskOptionsSchema>;
/** How a file import reads its upload (`import_files.source`). */
export type ImportFileSource = FromSchema<typeof importFileSourceSchema>;
/** The kinds of file an import reads. */
export type ImportFileFormat = ImportFileSource['format'];

/** One place-value pair of a schema failure, as docs/decisions.md names them: location, kind, details. */
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

// Environment values are strings; the config validator alone coerces them ("3000" -> 3000), and
// coercion is an option of a whole Ajv instance: the configuration has one of its own, every
// contract shares the other.
const configAjv = new Ajv2020({ allErrors: true, useDefaults: true, coerceTypes: true, strict: true });

/** Validates (and fills the defaults of) a raw configuration document. */
export const validateConfig = configAjv.compile<ConfigDocument>(configSchema);

/** How every contract is validated (the console's validators are generated with the same). */
export const CONTRACT_AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
  discriminator: true,
} as const;

/** The one validator of every contract: requests, records, task messages, declared attributes. */
export const contractAjv = new Ajv2020({ ...CONTRACT_AJV_OPTIONS });
// RFC 3339 times, exactly those the service converts (the export filters, the records' times).
contractAjv.addFormat('date-time', contractFormats['date-time']);

/** Validates a message read from the task bus. */
export const validateTaskMessage = contractAjv.compile<TaskMessage>(taskMessageSchema);

/** Validates an export request (its causes are reported as Invalid/ValidationFailed). */
export const validateExportRequest = contractAjv.compile<ExportRequest>(exportRequestSchema);

/** Validates the shape of an import request (`upsert` absent means false). */
export const validateImportRequest = contractAjv.compile<ImportRequest>(importRequestSchema);

/** The import record schema with the identifier's member required, and a string. */
export function importRecordSchemaFor(identifier: ImportIdentifier) {
  return {
    ...importRecordSchema,
    $id: `import-record-by-${identifier}`,
    required: [identifier],
    properties: { ...importRecordSchema.properties, [identifier]: { type: 'string' } },
  };
}

const recordValidators = new Map<ImportIdentifier, ValidateFunction<ImportRecord>>();

/** A validator of import records whose identifier member is required and a string (compiled once). */
export function importRecordValidator(identifier: ImportIdentifier): ValidateFunction<ImportRecord> {
  let validate = recordValidators.get(identifier);
  if (!validate) {
    validate = contractAjv.compile<ImportRecord>(importRecordSchemaFor(identifier));
    recordValidators.set(identifier, validate);
  }
  return validate;
}

/** Validates the settings an export task row keeps, as its worker reads them back. */
export const validateExportTaskOptions = contractAjv.compile<ExportTaskOptions>(exportTaskOptionsSchema);

/** Validates the settings an import task row keeps, as its worker reads them back. */
export const validateImportTaskOptions = contractAjv.compile<ImportTaskOptions>(importTaskOptionsSchema);

/** Validates how a file import reads its upload, as its worker reads it back. */
export const validateImportFileSource = contractAjv.compile<ImportFileSource>(importFileSourceSchema);
