import { Transform, type TransformCallback } from 'node:stream';

/**
 * Groups records into batches of `size`, dropping those before `from` (already applied by an
 * earlier attempt at the task).
 */
export function batchRecords(size: number, from: number): Transform {
  let batch: { index: number }[] = [];
  return new Transform({
    objectMode: true,
    highWaterMark: 2,
    transform(record: { index: number }, _enc, done: TransformCallback) {
      if (record.index < from) return done();
      batch.push(record);
      if (batch.length < size) return done();
      const full = batch;
      batch = [];
      done(null, full);
    },
    flush(done: TransformCallback) {
      done(null, batch.length > 0 ? batch : undefined);
    },
  });
}
