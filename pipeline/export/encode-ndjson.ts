import { Transform, type TransformCallback } from 'node:stream';
import { RECORD_ARRAYS_IN_FLIGHT, type RecordJson } from './export-records.js';

/**
 * What Postgres writes differently from JSON.stringify in a compact JSON text: numbers with a
 * fraction or an exponent (`0.00000015` for 1.5e-7), integers too long for a double, and keys that
 * are array indexes (JavaScript lists them first). A record without any of them is written as
 * Postgres wrote it; one with them is parsed and written again, so the file stays what the export
 * always wrote. Text inside strings may match too: that only takes the slower way.
 */
const JS_REWRITES = /\d[.eE]|\d{16}|"(?:0|[1-9]\d*)":/;

/** A record's JSON text as JSON.stringify writes the record. */
export function asJavaScriptWrites(json: RecordJson): RecordJson {
  return JS_REWRITES.test(json) ? JSON.stringify(JSON.parse(json)) : json;
}

/** Records' JSON texts (in arrays) -> ndjson: one compact JSON object per user and line. */
export function encodeNdjson(): Transform {
  return new Transform({
    writableObjectMode: true,
    writableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(records: RecordJson[], _enc, done: TransformCallback) {
      let text = '';
      for (const json of records) text += `${asJavaScriptWrites(json)}\n`;
      done(null, text);
    },
  });
}
