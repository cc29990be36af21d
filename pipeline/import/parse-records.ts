import { type Duplex, Readable } from 'node:stream';
import chain, { none } from 'stream-chain';
import jsonlParser from 'stream-chain/jsonl/parser.js';
import { EngineError } from '../errors.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { mapSecretMembers } from './secret-members.js';

/** One record of an import request, with its zero-based position in `records` (or its file). */
export interface IndexedRecord {
  readonly index: number;
  readonly raw: unknown;
  /** Why a record of a file could not be read (it fails alone); its `raw` is then null. */
  readonly problem?: string;
  /** A record of an ndjson or CSV file: its line in the file, counted from 1. */
  readonly line?: number;
  /** Another system's user: the members of it its conversion left out. */
  readonly unmapped?: readonly string[];
}

/**
 * The records of an import request as queued and logged (docs/decisions.md, Tasks): each secret member
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
 * The stages that turn an import's task message (`schemas/task-message`, the layout of
 * `importMessage`) into its records, one at a time, with their secret members opened: a JSON Lines
 * parser (stream-json's, which now lives in stream-chain: one JSON.parse per line), the first line
 * read for the sealed secrets, and each line after it a record. A JSON.parse per record costs far
 * less than stream-json's token parser (the bench's import rows measure it).
 */
export function recordStages(message: string, box: SecretBox): [Readable, Duplex] {
  let secrets: unknown[] | undefined;
  // A secret member of a record holds its position in the request's sealed list.
  const open = (secret: unknown) => {
    if (typeof secret !== 'number') return secret;
    if (!secrets || !(secret in secrets))
      throw new EngineError('SealedSecretMissing', 'an import record names a secret its message lacks');
    return secrets[secret];
  };
  const record = (raw: unknown, index: number): IndexedRecord => ({
    index,
    raw: mapSecretMembers(raw, open),
  });
  const readLine = ({ key, value }: { key: number; value: unknown }) => {
    if (key > 0) return record(value, key - 1);
    const request = (value as { request?: { secrets?: unknown; records?: unknown } } | null)?.request;
    if (typeof request?.secrets === 'string') {
      const opened = box.open(request.secrets);
      if (!Array.isArray(opened))
        throw new EngineError('SealedSecretUnreadable', 'the sealed secrets of an import are not a list');
      secrets = opened;
    }
    return none;
  };
  return [
    Readable.from([message]),
    chain([jsonlParser(), readLine], {
      writableObjectMode: false,
      readableObjectMode: true,
      readableHighWaterMark: 64,
    }),
  ];
}
