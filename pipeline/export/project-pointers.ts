import type { UserRecord } from './assemble-records.js';
import { compilePointer, type ExportField } from './pointers.js';

/** Records -> rows of cells, one per field, in field order. */
export function projectPointers(fields: readonly ExportField[]): (records: UserRecord[]) => unknown[][] {
  const readers = fields.map((f) => compilePointer(f.pointer));
  return (records) => records.map((record) => readers.map((read) => read(record)));
}
