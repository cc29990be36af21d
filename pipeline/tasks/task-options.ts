import type { ValidateFunction } from 'ajv/dist/2020.js';
import {
  type ExportTaskOptions,
  type ImportTaskOptions,
  validateExportTaskOptions,
  validateImportTaskOptions,
} from '../../schemas/index.js';
import { EngineError } from '../errors.js';

/** The settings a task row keeps, read back through their schema. */
function readOptions<T>(validate: ValidateFunction<T>, stored: unknown, kind: string): T {
  if (validate(stored)) return stored;
  const where = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  throw new EngineError(
    'TaskOptionsInvalid',
    `the ${kind} task's stored settings are invalid: ${where.join('; ')}`,
  );
}

/** An export task's settings, as its row keeps them. */
export const exportTaskOptions = (stored: unknown): ExportTaskOptions =>
  readOptions(validateExportTaskOptions, stored, 'export');

/** An import task's settings, as its row keeps them. */
export const importTaskOptions = (stored: unknown): ImportTaskOptions =>
  readOptions(validateImportTaskOptions, stored, 'import');
