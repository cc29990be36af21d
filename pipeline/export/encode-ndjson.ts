import type { Transform } from 'node:stream';
import { streamStage } from '../stream-stage.js';
import type { UserRecord } from './assemble-records.js';
import { ENCODED_BYTES_AHEAD, RECORD_ARRAYS_IN_FLIGHT } from './stage-marks.js';

/** Records (in arrays) -> ndjson: one compact JSON object per user and line. */
export function encodeNdjson(): Transform {
  return streamStage(
    {
      writableObjectMode: true,
      writableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT,
      readableHighWaterMark: ENCODED_BYTES_AHEAD,
    },
    (records: UserRecord[]) => {
      let text = '';
      for (const record of records) text += `${JSON.stringify(record)}\n`;
      return text;
    },
  );
}
