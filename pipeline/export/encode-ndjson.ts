import { Transform, type TransformCallback } from 'node:stream';
import type { UserRecord } from './assemble-records.js';
import { RECORD_ARRAYS_IN_FLIGHT } from './export-records.js';

/** Records (in arrays) -> ndjson: one compact JSON object per user and line. */
export function encodeNdjson(): Transform {
  return new Transform({
    writableObjectMode: true,
    writableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: UserRecord[], _enc, done: TransformCallback) {
      let text = '';
      for (const record of records) text += `${JSON.stringify(record)}\n`;
      done(null, text);
    },
  });
}
