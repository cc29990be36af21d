import { Transform, type TransformCallback } from 'node:stream';
import type { UserRecord } from './assemble-records.js';
import { RECORD_ARRAYS_IN_FLIGHT } from './export-records.js';
import { compilePointer, type ExportField } from './pointers.js';

/** Records (in arrays) -> rows of cells, one per field, in field order. */
export function projectPointers(fields: readonly ExportField[]): Transform {
  const readers = fields.map((f) => compilePointer(f.pointer));
  return new Transform({
    objectMode: true,
    highWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: UserRecord[], _enc, done: TransformCallback) {
      done(
        null,
        records.map((record) => readers.map((read) => read(record))),
      );
    },
  });
}
