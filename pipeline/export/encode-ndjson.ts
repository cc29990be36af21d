import type { UserRecord } from './assemble-records.js';
import type { BatchText } from './encode-records.js';

/** Records -> ndjson: one compact JSON object per user and line. */
export function ndjsonText(): BatchText<UserRecord> {
  return {
    encode(records) {
      let text = '';
      for (const record of records) text += `${JSON.stringify(record)}\n`;
      return text;
    },
    end: () => '',
  };
}
