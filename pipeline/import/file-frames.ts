import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { FrameRow, ImportFileRow } from '../db/import-files.js';
import { EngineError } from '../errors.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import { type FileLine, positionName } from './file-lines.js';
import type { IndexedRecord } from './parse-records.js';

// The frames of a file import's sealed copy (docs/file-imports.md): each a run of records of one
// part, one per line as `<index>\t<position>\t<JSON text>` (or `...\t!<why it cannot be read>`),
// the index the record's in the file, gzipped and sealed on its own, so that a resumed attempt
// opens the frame of its resume point and no other before it.

const gunzipped = promisify(gunzip);

/** Record `index` of the file as a frame holds it. */
export function frameLine(line: FileLine, index: number): string {
  return 'text' in line
    ? `${index}\t${line.position}\t${line.text}\n`
    : `${index}\t${line.position}\t!${line.problem.replace(/\s+/g, ' ')}\n`;
}

/** What an attempt read of a sealed copy: from which byte, and records read but already applied. */
export interface FramesRead {
  readonly sealedStart: number;
  reread: number;
}

/**
 * The records of `frames` (those of one part from the one holding record `from` on, in order),
 * each run of them that lies together in the sealed copy read with one ranged read; the records
 * before `from` are read and dropped (`read.reread`). A line that is not JSON comes with its
 * problem and fails alone.
 */
export async function* frameRecords(
  blobs: BlobStorage,
  box: SecretBox,
  file: ImportFileRow,
  frames: readonly FrameRow[],
  from: number,
  read: FramesRead,
  signal: AbortSignal,
): AsyncGenerator<IndexedRecord> {
  if (!file.sealed_blob || !file.source) return;
  const name = positionName(file.source.format);
  const wrapped = file.source.from !== undefined;
  for (const run of adjacentRuns(frames)) {
    const first = run[0] as FrameRow;
    const last = run[run.length - 1] as FrameRow;
    const input = await blobs.read(file.sealed_blob, signal, {
      offset: first.sealed_start,
      count: last.sealed_start + last.sealed_bytes - first.sealed_start,
    });
    for await (const [, sealed] of sealedFrames(input, run)) {
      const text = (await gunzipped(box.openBytes(sealed))).toString('utf8');
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const record = recordOf(line, name, wrapped);
        if (record.index < from) read.reread++;
        else yield record;
      }
    }
  }
}

/** Frames in runs that lie one after the other in the sealed copy (one part's of a split file may not). */
function adjacentRuns(frames: readonly FrameRow[]): FrameRow[][] {
  const runs: FrameRow[][] = [];
  for (const frame of frames) {
    const run = runs[runs.length - 1];
    const end = run?.[run.length - 1];
    if (run && end && end.sealed_start + end.sealed_bytes === frame.sealed_start) run.push(frame);
    else runs.push([frame]);
  }
  return runs;
}

/**
 * A frame's line as an import record: its JSON, or its problem (naming its place in the file). A
 * converted user of another system's file (`wrapped`) is `{"r": record, "u": [members left out]}`.
 */
function recordOf(line: string, name: 'line' | 'index', wrapped: boolean): IndexedRecord {
  const tab = line.indexOf('\t');
  const index = Number(line.slice(0, tab));
  const second = line.indexOf('\t', tab + 1);
  const position = line.slice(tab + 1, second);
  const body = line.slice(second + 1);
  const at = name === 'line' ? { line: Number(position) } : {};
  if (body.startsWith('!'))
    return { index, raw: null, problem: `${name} ${position}: ${body.slice(1)}`, ...at };
  try {
    const value: unknown = JSON.parse(body);
    if (!wrapped) return { index, raw: value, ...at };
    const { r, u } = value as { r: unknown; u: string[] };
    return { index, raw: r, ...at, ...(u.length > 0 ? { unmapped: u } : {}) };
  } catch (err) {
    return { index, raw: null, problem: `${name} ${position}: not JSON: ${(err as Error).message}`, ...at };
  }
}

/** The sealed bytes of each frame, cut from the stream of them by their recorded sizes. */
async function* sealedFrames(
  input: Readable,
  frames: readonly FrameRow[],
): AsyncGenerator<[FrameRow, Buffer]> {
  let at = 0;
  let pending: Buffer[] = [];
  let size = 0;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    pending.push(chunk);
    size += chunk.length;
    let frame = frames[at];
    while (frame && size >= frame.sealed_bytes) {
      const whole = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending);
      yield [frame, whole.subarray(0, frame.sealed_bytes)];
      const rest = whole.subarray(frame.sealed_bytes);
      pending = rest.length > 0 ? [rest] : [];
      size = rest.length;
      frame = frames[++at];
    }
  }
  if (at < frames.length)
    throw new EngineError('SealedFileShort', 'the sealed copy of the file ended before its last frame');
}
