import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { type FrameRow, type ImportFileRow, insertFrames, saveSourceProgress } from '../db/import-files.js';
import { lockImportProgress } from '../db/tasks/progress.js';
import { withTransaction } from '../db/transaction.js';
import { AttemptLost } from '../errors.js';
import { frameLine } from './file-frames.js';
import type { FileLine } from './file-lines.js';
import type { IntakeContext } from './intake-context.js';

const gzipped = promisify(gzip);

/**
 * Sealed frames are committed in blocks of about this many bytes: few enough commits for a large
 * file, and a block list within the store's 50,000 blocks up to hundreds of GiB of records.
 */
const BLOCK_BYTES = 4 * 1024 * 1024;

/** What an earlier attempt took in: the records (a prefix of the file), frames and sealed bytes. */
export interface TakenIn {
  readonly records: number;
  readonly frames: number;
  readonly sealedBytes: number;
  /** The committed block list. */
  readonly blocks: readonly string[];
}

/** The lines of one part waiting to be cut into a frame, with the first and last record's index. */
interface Pending {
  lines: string[];
  first: number;
  last: number;
}

/**
 * Cuts a file's records into sealed frames, a frame per part of each run of `frameRecords` of its
 * records, and commits them a block at a time. A commit cuts every part's waiting lines first, so
 * what is committed is always the file up to a record: where an attempt that stopped goes on.
 */
export class FrameWriter {
  /** Records taken in (by earlier attempts too). */
  records: number;
  private frame: number;
  private sealedEnd: number;
  private readonly blocks: string[];
  private readonly pending: Pending[];
  private block: Buffer[] = [];
  private blockBytes = 0;
  private frames: FrameRow[] = [];

  constructor(
    private readonly context: IntakeContext,
    private readonly file: ImportFileRow,
    parts: number,
    taken: TakenIn,
  ) {
    this.records = taken.records;
    this.frame = taken.frames;
    this.sealedEnd = taken.sealedBytes;
    this.blocks = [...taken.blocks];
    this.pending = Array.from({ length: parts }, () => ({ lines: [], first: 0, last: 0 }));
  }

  /** Adds the file's next record (`index`) to its part. */
  async add(line: FileLine, index: number, part: number, sourceEnd: number): Promise<void> {
    const pending = this.pending[part] as Pending;
    if (pending.lines.length === 0) pending.first = index;
    pending.lines.push(frameLine(line, index));
    pending.last = index;
    if (pending.lines.length >= this.context.frameRecords) await this.cut(part, sourceEnd);
    if (this.blockBytes >= BLOCK_BYTES) await this.commitBlock(sourceEnd, index + 1);
  }

  /** Commits what is left, the file read to its end (`records` records). */
  async close(sourceEnd: number, records: number): Promise<void> {
    await this.commitBlock(sourceEnd, records);
  }

  private async cut(part: number, sourceEnd: number): Promise<void> {
    const pending = this.pending[part] as Pending;
    const sealed = this.context.box.sealBytes(await gzipped(pending.lines.join('')));
    this.frames.push({
      frame: this.frame++,
      part,
      first_record: pending.first,
      last_record: pending.last,
      records: pending.lines.length,
      block_id: this.blockId(),
      sealed_start: this.sealedEnd,
      sealed_bytes: sealed.length,
      source_end: sourceEnd,
    });
    this.sealedEnd += sealed.length;
    pending.lines = [];
    this.block.push(sealed);
    this.blockBytes += sealed.length;
  }

  /** The id of the block being filled: the attempt's and the block's number, of one length. */
  private blockId(): string {
    const { attempt } = this.context.run.task;
    const tag = `a${String(attempt).padStart(6, '0')}b${String(this.blocks.length).padStart(8, '0')}`;
    return Buffer.from(tag).toString('base64');
  }

  /**
   * Cuts every part's waiting lines, stages the block, then commits the block list with it and
   * records its frames in one transaction that holds the task's row: an attempt that lost the task
   * commits nothing. The file up to record `through` is then taken in.
   */
  private async commitBlock(sourceEnd: number, through: number): Promise<void> {
    for (const [part, pending] of this.pending.entries())
      if (pending.lines.length > 0) await this.cut(part, sourceEnd);
    if (this.block.length === 0) return;
    const { pool, blobs, run } = this.context;
    const sealedBlob = this.file.sealed_blob as string;
    const id = this.blockId();
    await blobs.stageBlock(sealedBlob, id, Buffer.concat(this.block), run.signal);
    const ids = [...this.blocks, id];
    await withTransaction(pool, async (client) => {
      if ((await lockImportProgress(client, run.task)) === Number.POSITIVE_INFINITY)
        throw new AttemptLost(`task ${run.task.id} ended`);
      await blobs.commitBlocks(sealedBlob, ids, {
        contentType: 'application/octet-stream',
        contentDisposition: 'attachment',
      });
      await insertFrames(client, this.file, this.frames);
      await saveSourceProgress(client, this.file, sourceEnd, this.file.source?.bytes ?? 0);
    });
    this.blocks.push(id);
    this.block = [];
    this.blockBytes = 0;
    this.frames = [];
    this.records = through;
    run.advanced();
  }
}
