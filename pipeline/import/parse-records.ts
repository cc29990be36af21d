import { type Duplex, Readable } from 'node:stream';
import chain from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';

/** One record of an import request, with its zero-based position in `records`. */
export interface IndexedRecord {
  readonly index: number;
  readonly raw: unknown;
}

/**
 * The stages that turn a stored import request into its records, one at a time: the JSON parser,
 * a filter down to `records`, and a streamer of its elements. Nothing holds all records at once.
 *
 * The stages are composed by stream-chain into one stream (no stream hop per token), and the
 * parser emits whole values only (`streamValues: false`): records are small, and piece-by-piece
 * tokens for their strings tripled the parser's work.
 */
export function recordStages(input: string): [Readable, Duplex] {
  return [
    Readable.from([input]),
    chain(
      [
        parser({ streamValues: false }),
        pick({ filter: 'records' }),
        streamArray(),
        (item: { key: number; value: unknown }): IndexedRecord => ({ index: item.key, raw: item.value }),
      ],
      { writableObjectMode: false, readableObjectMode: true, readableHighWaterMark: 64 },
    ),
  ];
}
