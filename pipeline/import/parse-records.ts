import { type Duplex, Readable } from 'node:stream';
import chain, { none } from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser, { type Token } from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { mapSecretMembers } from './secret-members.js';

/** One record of an import request, with its zero-based position in `records`. */
export interface IndexedRecord {
  readonly index: number;
  readonly raw: unknown;
}

/**
 * The records of an import request as queued and logged (DECISIONS.md, Tasks): each secret member
 * replaced by its position in the request's list of secrets, and that list sealed as one value.
 * One seal per request, not one per record: sealing was a third of the facade's work on an import.
 */
export interface SealedRecords {
  readonly records: unknown[];
  /** The sealed list of the request's secrets; absent when no record holds one. */
  readonly secrets?: string;
}

/** Seals the secret members of an import request's records (see SealedRecords). */
export function sealRecords(records: readonly unknown[], box: SecretBox): SealedRecords {
  const found: unknown[] = [];
  const sealed = records.map((r) => mapSecretMembers(r, (secret) => found.push(secret) - 1));
  return found.length === 0 ? { records: sealed } : { secrets: box.seal(found), records: sealed };
}

/**
 * The stages that turn an import's task message (`schemas/task-message`) into its records, one at a
 * time, with their secret members opened: the JSON parser, a filter down to `request.secrets` and
 * `request.records`, the opening of the secrets (written before the records by `importMessage`),
 * and a streamer of the records. Nothing holds all records at once.
 *
 * The stages are composed by stream-chain into one stream (no stream hop per token), and the
 * parser emits whole values only (`streamValues: false`): records are small, and piece-by-piece
 * tokens for their strings tripled the parser's work.
 */
export function recordStages(message: string, box: SecretBox): [Readable, Duplex] {
  let secrets: unknown[] | undefined;
  let beforeRecords = true;
  const takeSecrets = (token: Token) => {
    if (!beforeRecords) return token;
    if (token.name !== 'stringValue') {
      beforeRecords = token.name !== 'startArray';
      return token;
    }
    const opened = box.open(token.value);
    if (!Array.isArray(opened)) throw new Error('the sealed secrets of an import are not a list');
    secrets = opened;
    return none;
  };
  // A sealed string is a secret of a message logged before secrets were sealed per request.
  const open = (secret: unknown) => {
    if (typeof secret === 'string') return box.open(secret);
    if (typeof secret !== 'number') return secret;
    if (!secrets || !(secret in secrets))
      throw new Error('an import record names a secret its message lacks');
    return secrets[secret];
  };
  return [
    Readable.from([message]),
    chain(
      [
        parser({ streamValues: false }),
        pick({ filter: /^request\.(secrets|records)$/ }),
        takeSecrets,
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
