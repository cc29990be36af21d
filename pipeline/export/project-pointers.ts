import type { Transform } from 'node:stream';
import { streamStage } from '../stream-stage.js';
import type { UserRecord } from './assemble-records.js';
import { compilePointer, type ExportField } from './pointers.js';
import { RECORD_ARRAYS_IN_FLIGHT } from './stage-marks.js';

/** Records (in arrays) -> rows of cells, one per field, in field order. */
export function projectPointers(fields: readonly ExportField[]): Transform {
  const readers = fields.map((f) => compilePointer(f.pointer));
  return streamStage({ objectMode: true, highWaterMark: RECORD_ARRAYS_IN_FLIGHT }, (records: UserRecord[]) =>
    records.map((record) => readers.map((read) => read(record))),
  );
}
