import { Readable, Transform, type TransformCallback } from 'node:stream';
import parserStream from 'stream-json';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';

/** One record of an import request, with its zero-based position in `records`. */
export interface IndexedRecord {
  readonly index: number;
  readonly raw: unknown;
}

/**
 * The stages that turn a stored import request into its records, one at a time: the JSON parser,
 * a filter down to `records`, and a streamer of its elements. Nothing holds all records at once.
 */
export function recordStages(input: string): [Readable, ...NodeJS.ReadWriteStream[]] {
  return [
    Readable.from([input]),
    parserStream(),
    pick.asStream({ filter: 'records' }),
    streamArray.asStream(),
    new Transform({
      objectMode: true,
      highWaterMark: 64,
      transform(item: { key: number; value: unknown }, _enc, done: TransformCallback) {
        done(null, { index: item.key, raw: item.value } satisfies IndexedRecord);
      },
    }),
  ];
}
