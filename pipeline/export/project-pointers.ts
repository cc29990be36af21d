import { Transform, type TransformCallback } from 'node:stream';
import { RECORD_ARRAYS_IN_FLIGHT, type RecordJson } from './export-records.js';
import { compilePointer, type ExportField } from './pointers.js';

/** Records' JSON texts (in arrays) -> rows of cells, one per field, in field order. */
export function projectPointers(fields: readonly ExportField[]): Transform {
  const readers = fields.map((f) => compilePointer(f.pointer));
  return new Transform({
    objectMode: true,
    highWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: RecordJson[], _enc, done: TransformCallback) {
      done(
        null,
        records.map((json) => {
          const record: unknown = JSON.parse(json);
          return readers.map((read) => read(record));
        }),
      );
    },
  });
}
