import { closeSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { BlockBlobClient } from '@azure/storage-blob';
import { uploadBlockId } from '../../pipeline/blob/task-files.js';
import { CliError, EXIT } from '../cli-error.js';
import { count, type Progress, progressOnStderr } from '../progress.js';
import { errorMessage, type ServiceClient } from '../service-client.js';
import {
  closingReport,
  type Detail,
  followTask,
  type ImportFileOptions,
  type ImportStatus,
  ROUTE,
} from './import-file.js';
import { type FileUpload, ImportState, noCounts, type RunCounts } from './import-state.js';

/** A file at least this large is imported server-side (one upload, one task) without being asked. */
export const SERVER_SIDE_BYTES = 100 * 1024 * 1024;

/** The file is staged in blocks of this size, this many at once. */
const BLOCK_BYTES = 8 * 1024 * 1024;
const BLOCKS_IN_FLIGHT = 4;
/** An upload whose URL has less than this left is not resumed: a new one is asked for. */
const UPLOAD_MARGIN_MS = 10 * 60_000;

/**
 * Imports a file server-side (docs/file-imports.md): asks for an upload, stages the file to it in
 * blocks, commits them, and starts one import task naming it; then follows the task and writes
 * its details as the results file, one line per record of the file. The state file journals the
 * upload and the blocks staged, so the same command started again stages only the rest (on the
 * same upload while its URL lasts), and the accepted task, so it is never started twice. Returns
 * the exit code as `importFile` does.
 */
export async function importServerSide(client: ServiceClient, options: ImportFileOptions): Promise<number> {
  const run = ImportState.runOf(options.file, options.identifier, options.upsert, {
    format: options.format,
    server_side: true,
    ...(options.dryRun ? { dry_run: true } : {}),
  });
  const state = ImportState.open(options.stateFile, run);
  const progress = progressOnStderr('import');
  let completed = false;
  try {
    let taskId = state.taskOf(0);
    if (!taskId) {
      const upload = await uploadFile(client, state, options.file, run.size, progress);
      const answer = await client.call<{ id?: string }>(
        'POST',
        ROUTE,
        JSON.stringify({
          identifier: options.identifier,
          upsert: options.upsert,
          ...(options.dryRun ? { dry_run: true } : {}),
          source: { upload_id: upload.upload_id },
          format: options.format,
        }),
        { 'idempotency-key': `${state.runId}-0` },
      );
      if (answer.status !== 200 || !answer.body?.id) {
        throw new CliError(
          `the service refused the import of the uploaded file (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
        );
      }
      taskId = answer.body.id;
      state.accepted(0, taskId);
    }
    const status = await followTask(
      client,
      taskId,
      (p) => {
        progress.update(
          p.total === 0
            ? {
                done: p.bytes_read ?? 0,
                total: p.bytes_total ?? 1,
                detail: `taking the file in: ${count(p.bytes_read ?? 0)} of ${count(p.bytes_total ?? 0)} bytes`,
                rate: '',
              }
            : {
                done: p.processed,
                total: p.total,
                detail: `${count(p.processed)} of ${count(p.total)} records applied`,
                rate: '',
              },
        );
      },
      { details: false },
    );
    const counts = await writeResults(client, taskId, options.resultsFile, status);
    state.written(0, 0, counts);
    completed = true;
    if (!status.error) return closingReport(counts, options, []);
    closingReport(counts, options, [`the import task failed: ${JSON.stringify(status.error)}`]);
    return EXIT.someFailed;
  } finally {
    progress.stop(completed);
  }
}

/**
 * Stages the file to its upload, from the first block not yet staged, and commits the blocks: the
 * upload it is then. An upload whose URL is about to end, or whose staged blocks the store no longer
 * has, is started again with a new one.
 */
async function uploadFile(
  client: ServiceClient,
  state: ImportState,
  file: string,
  size: number,
  progress: Progress,
): Promise<FileUpload> {
  for (let fresh = false; ; fresh = true) {
    const usable = state.upload && Date.parse(state.upload.expires_at) - Date.now() > UPLOAD_MARGIN_MS;
    if (fresh || !usable || !state.upload) state.uploading(await newUpload(client));
    const upload = state.upload as FileUpload;
    const blob = new BlockBlobClient(upload.upload_url);
    const blocks = Math.max(Math.ceil(size / BLOCK_BYTES), 1);
    await stageBlocks(blob, state, file, size, blocks, progress);
    try {
      await blob.commitBlockList(Array.from({ length: blocks }, (_, i) => uploadBlockId(i)));
      return upload;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (fresh || (code !== 'InvalidBlockList' && code !== 'BlobNotFound')) throw err;
    }
  }
}

async function newUpload(client: ServiceClient): Promise<FileUpload> {
  const answer = await client.call<FileUpload>('POST', `${ROUTE}/uploads`);
  if (answer.status !== 200)
    throw new CliError(
      `the service gave no upload (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
    );
  return answer.body;
}

/** Stages blocks state.staged.. of the file, a few at once, journaling each run of them staged. */
async function stageBlocks(
  blob: BlockBlobClient,
  state: ImportState,
  file: string,
  size: number,
  blocks: number,
  progress: Progress,
): Promise<void> {
  const handle = await open(file, 'r');
  const done = new Set<number>();
  let next = state.staged;
  if (next > 0)
    process.stderr.write(
      `userctl: resuming the upload of ${file} from byte ${next * BLOCK_BYTES} (block ${next + 1} of ${blocks})\n`,
    );
  const show = () =>
    progress.update({
      done: Math.min(state.staged * BLOCK_BYTES, size),
      total: size,
      detail: `uploading: ${count(Math.min(state.staged * BLOCK_BYTES, size))} of ${count(size)} bytes`,
      rate: '',
    });
  try {
    const worker = async () => {
      for (let block = next++; block < blocks; block = next++) {
        const length = Math.min(BLOCK_BYTES, size - block * BLOCK_BYTES);
        const buffer = Buffer.alloc(Math.max(length, 0));
        if (length > 0) await handle.read(buffer, 0, length, block * BLOCK_BYTES);
        await blob.stageBlock(uploadBlockId(block), buffer, buffer.length);
        done.add(block);
        let staged = state.staged;
        while (done.delete(staged)) staged++;
        if (staged > state.staged) state.stagedBlocks(staged);
        show();
      }
    };
    await Promise.all(Array.from({ length: BLOCKS_IN_FLIGHT }, worker));
  } finally {
    await handle.close();
  }
}

/**
 * Writes the task's details as the results file (a line per record, in file order) as they are
 * read: its results file streamed line by line, or its details page by page, never all at once (a
 * file's may be larger than any string); its counts.
 */
async function writeResults(
  client: ServiceClient,
  taskId: string,
  path: string,
  status: ImportStatus,
): Promise<RunCounts> {
  const counts = noCounts();
  const fd = openSync(path, 'w');
  let at = 0;
  const write = (d: Detail) => {
    const line = {
      position: d.index,
      outcome: d.outcome,
      ...(d.user_id ? { user_id: d.user_id } : {}),
      ...(d.warnings ? { warnings: d.warnings } : {}),
      ...(d.errors ? { errors: d.errors } : {}),
    };
    at += writeSync(fd, `${JSON.stringify(line)}\n`, at);
    counts[d.outcome]++;
    counts.warnings += d.warnings?.length ?? 0;
  };
  try {
    if (status.results_url) {
      const download = await client.download(status.results_url);
      if (download.statusCode !== 200)
        throw new CliError(`cannot download the results of task ${taskId} (${download.statusCode})`);
      for await (const text of createInterface({ input: download.body, crlfDelay: Number.POSITIVE_INFINITY }))
        if (text !== '') write(JSON.parse(text) as Detail);
    } else {
      for (let next: string | undefined = `${ROUTE}/${taskId}?limit=10000`; next !== undefined; ) {
        const answer: { status: number; body: ImportStatus } = await client.call<ImportStatus>('GET', next);
        if (answer.status !== 200) throw new CliError(`cannot read task ${taskId} (${answer.status})`);
        for (const d of answer.body.details ?? []) write(d);
        next = answer.body.details_next;
      }
    }
  } finally {
    closeSync(fd);
  }
  return counts;
}
