import { type Duplex, Readable } from 'node:stream';
import chain from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { mapSecretMembers } from './secret-members.js';

/** One record of an import request, with its zero-based position in `records`. */
export interface IndexedRecord {
  readonly index: number;
  readonly raw: unknown;
}

/**
 * The stages that turn an import's task message (`schemas/task-message`) into its records, one at a
 * time, with their secret members opened: the JSON parser, a filter down to `request.records`, and
 * a streamer of its elements. Nothing holds all records at once.
 *
 * The stages are composed by stream-chain into one stream (no stream hop per token), and the
 * parser emits whole values only (`streamValues: false`): records are small, and piece-by-piece
 * tokens for their strings tripled the parser's work.
 */
export function recordStages(message: string, secrets: SecretBox): [Readable, Duplex] {
  const open = (sealed: unknown) => (typeof sealed === 'string' ? secrets.open(sealed) : sealed);
  return [
    Readable.from([message]),
    chain(
      [
        parser({ streamValues: false }),
        pick({ filter: 'request.records' }),
        streamArray(),
        (item: { key: number; value: unknown }): IndexedRecord => ({
          index: item.key,
          raw: mapSecretMembers(item.value, open),
        }),
      ],
      { writableObjectMode: false, readableObjectMode: true, readableHighWaterMark: 64 },
    ),
  ];
}

/** The records of an import request as queued and logged: each secret member sealed (DECISIONS.md, Tasks). */
export function sealRecords(records: readonly unknown[], secrets: SecretBox): unknown[] {
  return records.map((r) => mapSecretMembers(r, (secret) => secrets.seal(secret)));
}
