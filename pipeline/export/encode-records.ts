import type { Transform } from 'node:stream';
import { streamStage } from '../stream-stage.js';
import type { CopyRecords, UserRecord } from './assemble-records.js';
import { ENCODED_BYTES_AHEAD } from './stage-marks.js';

/** How a file's text is made: each batch's text as the batch comes, then what the file ends with. */
export interface BatchText<T> {
  encode(batch: T[]): string;
  end(): string;
  /** The most records a batch holds; without it, every record a chunk read completes. */
  readonly recordsAtOnce?: number;
}

/**
 * The records statement's COPY text -> the export file's text, in one stage: each chunk's records
 * are assembled and encoded (a batch of `text.recordsAtOnce` at a time) before the next chunk is
 * taken, and only text waits between stages. A record kept in a queue between stages (behind a
 * store that is slow for a moment, the queues stay full) would outlive the young generation, and be
 * promoted with everything it holds.
 * `progress` is told the number of records written so far, after each batch.
 */
export function encodeRecords(
  records: CopyRecords,
  text: BatchText<UserRecord>,
  progress: (processed: number) => void,
): Transform {
  let processed = 0;
  const encode = (batch: UserRecord[]) => {
    if (batch.length === 0) return '';
    processed += batch.length;
    progress(processed);
    return text.encode(batch);
  };
  const some = (out: string) => (out === '' ? undefined : out);
  const atOnce = text.recordsAtOnce ?? Number.POSITIVE_INFINITY;
  return streamStage(
    { writableObjectMode: true, writableHighWaterMark: 1, readableHighWaterMark: ENCODED_BYTES_AHEAD },
    (chunk: Buffer) => {
      let out = '';
      for (const batch of records.batches(chunk, atOnce)) out += encode(batch);
      return some(out);
    },
    () => some(encode(records.end()) + text.end()),
  );
}
