import { Transform, type TransformCallback } from 'node:stream';
import { RECORD_ARRAYS_IN_FLIGHT, type UserExportRecord } from './export-records.js';

/** Records (in arrays) -> ndjson: one compact JSON object per user and line. */
export function encodeNdjson(): Transform {
  return new Transform({
    writableObjectMode: true,
    writableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: UserExportRecord[], _enc, done: TransformCallback) {
      let text = '';
      for (const record of records) text += `${JSON.stringify(record)}\n`;
      done(null, text);
    },
  });
}
