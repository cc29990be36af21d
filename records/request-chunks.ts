import type { FileRecord } from './file-records.js';

/**
 * A text's length in UTF-8 bytes: Node's own count where there is one (userctl), the encoder's in
 * a browser (the console, which packs its requests with this module too).
 */
const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string): number } }).Buffer;
const encoder = new TextEncoder();
const utf8Length = nodeBuffer
  ? (text: string) => nodeBuffer.byteLength(text)
  : (text: string) => encoder.encode(text).length;

/** Spec 8: an import request body is at most 500 KB (docs/decisions.md: 500000 bytes). */
export const REQUEST_LIMIT = 500_000;

/** A record that is not sent: its position and why. */
export interface LocalFailure {
  readonly position: number;
  readonly problem: string;
}

/** One import request: the records it carries, in file order, and its body exactly as sent. */
export interface RequestChunk {
  readonly index: number;
  /** Positions of the records in the body, in order (the body's `records[i]` is `positions[i]`). */
  readonly positions: readonly number[];
  /** Records before or among these that fail without being sent. */
  readonly localFailures: readonly LocalFailure[];
  /** Records merged into another of the file (position -> that one's position), not sent. */
  readonly merged: ReadonlyMap<number, number>;
  /** Position -> the source members a `--from` reader left out of its record. */
  readonly unmapped: ReadonlyMap<number, readonly string[]>;
  /** The users its records name, by identifier value (userKey): chunks that share one apply in order. */
  readonly users: ReadonlySet<string>;
  readonly body: string;
}

/**
 * The user a record names by its identifier, as a key that every spelling the service would match
 * as one user shares (Unicode NFKC, trimmed, in lower case; a phone number's digits): two records
 * with one key are of one user, or at worst of two that are then merely sent one after the other.
 */
export function userKey(identifier: string, record: unknown): string | undefined {
  const value = (record as Record<string, unknown> | null)?.[identifier];
  if (typeof value !== 'string') return undefined;
  return identifier === 'phone_number'
    ? value.replace(/[^0-9]/g, '')
    : value.normalize('NFKC').trim().toLowerCase();
}

/**
 * Packs records, in order, into request bodies of at most `limit` bytes (as UTF-8, never over).
 * A record too large for a request on its own fails alone. A chunk is cut as soon as the next
 * record would not fit, so the same file always gives the same chunks.
 */
export async function* requestChunks(
  records: AsyncIterable<FileRecord>,
  request: { readonly identifier: string; readonly upsert: boolean; readonly dryRun?: boolean },
  limit = REQUEST_LIMIT,
): AsyncGenerator<RequestChunk> {
  const dryRun = request.dryRun ? '"dry_run":true,' : '';
  const head = `{"identifier":${JSON.stringify(request.identifier)},"upsert":${request.upsert},${dryRun}"records":[`;
  const tail = ']}';
  const frame = utf8Length(head) + utf8Length(tail);
  let index = 0;
  let parts: string[] = [];
  let positions: number[] = [];
  let failures: LocalFailure[] = [];
  let merged = new Map<number, number>();
  let unmapped = new Map<number, readonly string[]>();
  let users = new Set<string>();
  let bytes = frame;
  const cut = (): RequestChunk => {
    const chunk = {
      index: index++,
      positions,
      localFailures: failures,
      merged,
      unmapped,
      users,
      body: `${head}${parts.join(',')}${tail}`,
    };
    parts = [];
    positions = [];
    failures = [];
    merged = new Map();
    unmapped = new Map();
    users = new Set();
    bytes = frame;
    return chunk;
  };
  for await (const item of records) {
    if ('problem' in item) {
      failures.push({ position: item.position, problem: item.problem });
      continue;
    }
    if ('mergedInto' in item) {
      merged.set(item.position, item.mergedInto);
      continue;
    }
    if (item.unmapped) unmapped.set(item.position, item.unmapped);
    const text = JSON.stringify(item.record);
    const size = utf8Length(text);
    if (frame + size > limit) {
      failures.push({
        position: item.position,
        problem: `the record alone is over the request limit (${limit} bytes)`,
      });
      continue;
    }
    const added = size + (parts.length > 0 ? 1 : 0);
    const user = userKey(request.identifier, item.record);
    if (bytes + added > limit) {
      yield cut();
      if (user !== undefined) users.add(user);
      parts.push(text);
      positions.push(item.position);
      bytes += size;
      continue;
    }
    if (user !== undefined) users.add(user);
    parts.push(text);
    positions.push(item.position);
    bytes += added;
  }
  if (parts.length > 0 || failures.length > 0 || merged.size > 0) yield cut();
}
