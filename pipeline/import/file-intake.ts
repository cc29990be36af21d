import { type Readable, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { type ImportPlan, lossesThatStop, PlanTally } from '../../records/import-plan.js';
import { finishIntake, fixFileParts, type ImportFileRow, takenIn } from '../db/import-files.js';
import { ApiError } from '../errors.js';
import { fileLines } from './file-lines.js';
import { foreignLines } from './foreign-lines.js';
import { FrameWriter } from './frame-writer.js';
import type { IntakeContext } from './intake-context.js';
import { urlFiles } from './url-source.js';

/**
 * Takes an import's file in (docs/file-imports.md): reads the snapshot of the upload taken at
 * acceptance (or the file at its URL), decompressed, as records in file order, routes each to its
 * part (by its identifier, when the file is split) and writes them to the task's sealed copy in
 * frames (frame-writer.ts), committed a block at a time in the transaction that fences the attempt.
 * An attempt that stopped midway goes on after the last record committed. Once the whole file is
 * in, the task's total is its record count and the upload is deleted; the sealed copy is kept for
 * a replay.
 */
export async function takeInFile(context: IntakeContext, file: ImportFileRow): Promise<void> {
  if (file.records !== null || !file.source || !file.sealed_blob) return;
  const { pool, blobs, run } = context;
  const { source } = file;
  const parts = await fixFileParts(pool, file, context.parts);
  const writer = new FrameWriter(context, file, parts, await takenIn(pool, file));
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
  const partOf = parts === 1 ? () => 0 : context.route(parts, source.from !== undefined);
  let index = 0;
  for await (const line of lines) {
    // Read again to the point an earlier attempt committed, and routed again the same way.
    if (index >= writer.records) await writer.add(line, index, partOf(line), counted.bytes());
    index++;
  }
  if (storeFault) throw storeFault;
  // Another system's users: a loss no one accepted ends the import before it applies anything.
  if (tally) refuseLosses(tally.plan(), source.from?.allow_loss ?? []);
  await writer.close(counted.bytes(), index);
  await finishIntake(pool, file, index, context.retentionSeconds);
  run.log.info({ records: index, bytes: source.bytes, parts }, 'file taken in');
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
