import type { Transform } from 'node:stream';
import { streamStage } from '../stream-stage.js';

/**
 * Groups records into batches of `size`, dropping those before `from` (already applied by an
 * earlier attempt at the task).
 */
export function batchRecords(size: number, from: number): Transform {
  let batch: { index: number }[] = [];
  return streamStage(
    { objectMode: true, highWaterMark: 2 },
    (record: { index: number }) => {
      if (record.index < from) return undefined;
      batch.push(record);
      if (batch.length < size) return undefined;
      const full = batch;
      batch = [];
      return full;
    },
    () => (batch.length > 0 ? batch : undefined),
  );
}
