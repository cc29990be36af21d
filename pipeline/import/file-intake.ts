import { type Readable, Transform } from 'node:stream';
import { promisify } from 'node:util';
import { createGunzip, gzip } from 'node:zlib';
import { type ImportPlan, lossesThatStop, PlanTally } from '../../records/import-plan.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { WebhookConfig } from '../config.js';
import {
  type FrameRow,
  finishIntake,
  frameBlocks,
  type ImportFileRow,
  insertFrames,
  lastFrame,
  saveSourceProgress,
} from '../db/import-files.js';
import type { Pool } from '../db/pool.js';
import { lockImportProgress } from '../db/tasks/progress.js';
import { withTransaction } from '../db/transaction.js';
import { ApiError, AttemptLost } from '../errors.js';
import type { TaskRun } from '../tasks/run-task.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { frameLine } from './file-frames.js';
import { type FileLine, fileLines } from './file-lines.js';
import { foreignLines } from './foreign-lines.js';
import { urlFiles } from './url-source.js';

const gzipped = promisify(gzip);

/**
 * Sealed frames are committed in blocks of about this many bytes: few enough commits for a large
 * file, and a block list within the store's 50,000 blocks up to hundreds of GiB of records.
 */
const BLOCK_BYTES = 4 * 1024 * 1024;

/** How the intake is cut: records per frame (an import batch's), and what it reads with. */
export interface IntakeContext {
  readonly pool: Pool;
  readonly blobs: BlobStorage;
  readonly box: SecretBox;
  readonly run: TaskRun;
  readonly frameRecords: number;
  readonly retentionSeconds: number;
  /** The network policy a file named by URL is read under (the webhooks'). */
  readonly webhooks: Pick<WebhookConfig, 'allowedHosts' | 'timeoutMs'>;
}

/**
 * Takes an import's file in (docs/file-imports.md): reads the snapshot of the upload taken at
 * acceptance (or the file at its URL), decompressed, as records in file order, and writes them to the task's sealed
 * copy in frames of `frameRecords` (each gzipped and sealed on its own), committed a block at a
 * time in the transaction that fences the attempt and records the frames. An attempt that stopped
 * midway is taken up after the last recorded frame. Once the whole file is in, the task's total is
 * its record count and the upload is deleted; the sealed copy is kept for a replay.
 */
export async function takeInFile(context: IntakeContext, file: ImportFileRow): Promise<void> {
  if (file.records !== null || !file.source || !file.sealed_blob) return;
  const { pool, blobs, run } = context;
  const { source } = file;
  const last = await lastFrame(pool, file);
  const writer = new FrameWriter(context, file, await frameBlocks(pool, file), last);
  const raw = await openFile(context, file);
  const counted = countBytes(raw);
  let storeFault: Error | undefined;
  raw.once('error', (err) => {
    storeFault = err;
  });
  const text: Readable = source.compression === 'gzip' ? counted.stream.pipe(createGunzip()) : counted.stream;
  if (text !== counted.stream) counted.stream.once('error', (err) => text.destroy(err));
  const unreadable = (err: Error) => {
    if (storeFault) throw storeFault;
    return `the file cannot be read past byte ${counted.bytes()} of ${source.bytes}: ${err.message}`;
  };
  const tally = source.from ? new PlanTally() : undefined;
  const lines =
    source.from && tally
      ? foreignLines(text, { format: source.format, from: source.from }, unreadable, tally)
      : fileLines(text, source, unreadable);
  let index = 0;
  for await (const line of lines) {
    if (index++ < writer.records) continue; // taken in by an earlier attempt
    await writer.add(line, counted.bytes());
  }
  if (storeFault) throw storeFault;
  // Another system's users: a loss no one accepted ends the import before it applies anything.
  if (tally) refuseLosses(tally.plan(), source.from?.allow_loss ?? []);
  await writer.close(counted.bytes());
  await finishIntake(pool, file, writer.records, context.retentionSeconds);
  run.log.info({ records: writer.records, bytes: source.bytes }, 'file taken in');
  // The sealed copy holds the file now; an upload left by a fault here is deleted by the sweep.
  await blobs.delete(file.upload_blob).catch((err: unknown) => {
    run.log.warn({ err }, 'could not delete the taken-in upload; the sweep will');
  });
}

/** The file as the import was given it: the snapshot of its upload, or its URL (opened). */
async function openFile(context: IntakeContext, file: ImportFileRow): Promise<Readable> {
  const { source } = file;
  const { signal } = context.run;
  if (source?.sealed_url === undefined)
    return context.blobs.read(
      file.upload_blob,
      signal,
      source?.snapshot ? { snapshot: source.snapshot } : {},
    );
  const urls = urlFiles(context.webhooks);
  const body = await urls.open(String(context.box.open(source.sealed_url)), signal).catch(async (err) => {
    await urls.close();
    throw err;
  });
  body.once('close', () => void urls.close());
  return body;
}

/** Throws ImportFieldsLost when the users carry members the import would lose that are not allowed. */
function refuseLosses(plan: ImportPlan, allowed: readonly string[]): void {
  const losses = lossesThatStop(plan, new Set(allowed));
  if (losses.length === 0) return;
  throw new ApiError(
    'ImportFieldsLost',
    `the users carry members the import would leave out: ${losses.map((f) => f.field).join(', ')}; ` +
      'name each in from.allow_loss to import without it',
    { fields: losses.map((f) => ({ field: f.field, records: f.records, dropped: f.dropped })) },
  );
}

/** A stream's bytes as they pass, counted. */
function countBytes(input: Readable): { stream: Readable; bytes: () => number } {
  let bytes = 0;
  const stream = input.pipe(
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  input.once('error', (err) => stream.destroy(err));
  return { stream, bytes: () => bytes };
}

/** Cuts lines into sealed frames and commits them a block at a time. */
class FrameWriter {
  /** Records taken in (by earlier attempts too). */
  records: number;
  private frame: number;
  private sealedEnd: number;
  private lines: string[] = [];
  private block: Buffer[] = [];
  private blockBytes = 0;
  private frames: FrameRow[] = [];

  constructor(
    private readonly context: IntakeContext,
    private readonly file: ImportFileRow,
    private readonly blocks: string[],
    last: FrameRow | undefined,
  ) {
    this.records = last ? last.first_record + last.records : 0;
    this.frame = last ? last.frame + 1 : 0;
    this.sealedEnd = last ? last.sealed_start + last.sealed_bytes : 0;
  }

  async add(line: FileLine, sourceEnd: number): Promise<void> {
    this.lines.push(frameLine(line));
    if (this.lines.length >= this.context.frameRecords) await this.cutFrame(sourceEnd);
  }

  async close(sourceEnd: number): Promise<void> {
    if (this.lines.length > 0) await this.cutFrame(sourceEnd);
    if (this.block.length > 0) await this.commitBlock(sourceEnd);
  }

  private async cutFrame(sourceEnd: number): Promise<void> {
    const sealed = this.context.box.sealBytes(await gzipped(this.lines.join('')));
    this.frames.push({
      frame: this.frame++,
      first_record: this.records,
      records: this.lines.length,
      block_id: this.blockId(),
      sealed_start: this.sealedEnd,
      sealed_bytes: sealed.length,
      source_end: sourceEnd,
    });
    this.records += this.lines.length;
    this.sealedEnd += sealed.length;
    this.lines = [];
    this.block.push(sealed);
    this.blockBytes += sealed.length;
    if (this.blockBytes >= BLOCK_BYTES) await this.commitBlock(sourceEnd);
  }

  /** The id of the block being filled: the attempt's and the block's number, of one length. */
  private blockId(): string {
    const { attempt } = this.context.run.task;
    const tag = `a${String(attempt).padStart(6, '0')}b${String(this.blocks.length).padStart(8, '0')}`;
    return Buffer.from(tag).toString('base64');
  }

  /**
   * Stages the block, then commits the block list with it and records its frames in one
   * transaction that holds the task's row: an attempt that lost the task commits nothing.
   */
  private async commitBlock(sourceEnd: number): Promise<void> {
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
    run.advanced();
  }
}
