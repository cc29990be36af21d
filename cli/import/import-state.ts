import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { CliError } from '../cli-error.js';

/** What a run of `userctl import` is: the same file, unchanged, with the same options. */
export interface ImportRun {
  readonly file: string;
  readonly size: number;
  readonly mtime_ms: number;
  readonly identifier: string;
  readonly upsert: boolean;
  /**
   * A digest of every option that decides how the file is read and cut into requests (its format,
   * `--from` and its flags): a resume with others would shift the requests' boundaries, and some
   * records would be neither sent nor reported.
   */
  readonly chunking: string;
}

/** Outcomes counted over the records written to the results file. */
export interface OutcomeCounts {
  inserted: number;
  updated: number;
  skipped: number;
  failed: number;
  /** A dry run's outcomes. */
  would_insert: number;
  would_update: number;
  would_skip: number;
}

/** What a run counted so far: each outcome, the warnings, and the records with unmapped members. */
export interface RunCounts extends OutcomeCounts {
  warnings: number;
  unmapped: number;
}

/** Counts of a run before any record. */
export function noCounts(): RunCounts {
  return {
    inserted: 0,
    updated: 0,
    skipped: 0,
    failed: 0,
    would_insert: 0,
    would_update: 0,
    would_skip: 0,
    warnings: 0,
    unmapped: 0,
  };
}

/** The outcome of one record. */
export type RecordOutcome = keyof OutcomeCounts;

/** An upload of the whole file for a server-side import: where it goes, and until when. */
export interface FileUpload {
  readonly upload_id: string;
  readonly upload_url: string;
  readonly expires_at: string;
}

/** The journal's lines after its header. */
type Entry =
  | { readonly chunk: number; readonly task_id: string }
  | { readonly flushed: number; readonly results_bytes: number; readonly counts: RunCounts }
  | { readonly upload: FileUpload }
  | { readonly staged: number };

/**
 * The state file of an import: a journal, one JSON line per step, appended and never rewritten
 * (a crash loses at most the line being written). Its header names the run; then each request's
 * task id once the service accepted it, and each request whose results are in the results file
 * (in order), with the results file's length and counts at that point. The same command started
 * again reads it and sends none of the accepted requests again.
 */
export class ImportState {
  private readonly taskIds = new Map<number, string>();
  /** A server-side import: its upload, and the blocks of the file staged to it, in order (0..staged-1). */
  upload: FileUpload | undefined;
  staged = 0;
  /** Requests whose results are written, in order: 0..flushed-1. */
  flushed = 0;
  resultsBytes = 0;
  counts: RunCounts = noCounts();

  private constructor(
    private readonly path: string,
    /** Names this run's requests to the service (Idempotency-Key), so a resent one is known. */
    readonly runId: string,
    readonly resumed: boolean,
  ) {}

  /** Opens the state of this run, or starts one; a state of another run is refused. */
  static open(path: string, run: ImportRun): ImportState {
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text === undefined || text.trim() === '') {
      const state = new ImportState(path, randomUUID(), false);
      writeFileSync(path, `${JSON.stringify({ run_id: state.runId, ...run })}\n`, { mode: 0o600 });
      return state;
    }
    const [headerLine, ...lines] = text.split('\n');
    const header = JSON.parse(headerLine ?? '{}') as ImportRun & { run_id: string };
    const differs = (['file', 'size', 'mtime_ms', 'identifier', 'upsert', 'chunking'] as const).filter(
      (k) => header[k] !== run[k],
    );
    if (differs.length > 0) {
      throw new CliError(
        `${path} is the state of another import (${differs.join(', ')} differ): remove it to start over`,
      );
    }
    const state = new ImportState(path, header.run_id, true);
    for (const line of lines) {
      if (line.trim() === '') continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        break; // the line a crash cut short: nothing after it was written
      }
      if ('task_id' in entry) state.taskIds.set(entry.chunk, entry.task_id);
      else if ('upload' in entry) {
        state.upload = entry.upload;
        state.staged = 0;
      } else if ('staged' in entry) state.staged = entry.staged;
      else {
        state.flushed = entry.flushed + 1;
        state.resultsBytes = entry.results_bytes;
        state.counts = { ...state.counts, ...entry.counts };
      }
    }
    return state;
  }

  /** The run of a file as it is now, read and cut into requests by `chunking` (JSON values). */
  static runOf(file: string, identifier: string, upsert: boolean, chunking: unknown): ImportRun {
    const stat = statSync(file);
    return {
      file,
      size: stat.size,
      mtime_ms: Math.trunc(stat.mtimeMs),
      identifier,
      upsert,
      chunking: createHash('sha256').update(JSON.stringify(chunking)).digest('base64url'),
    };
  }

  taskOf(chunk: number): string | undefined {
    return this.taskIds.get(chunk);
  }

  accepted(chunk: number, taskId: string): void {
    this.taskIds.set(chunk, taskId);
    this.append({ chunk, task_id: taskId });
  }

  written(chunk: number, resultsBytes: number, counts: RunCounts): void {
    this.flushed = chunk + 1;
    this.resultsBytes = resultsBytes;
    this.counts = { ...counts };
    this.taskIds.delete(chunk);
    this.append({ flushed: chunk, results_bytes: resultsBytes, counts });
  }

  /** A new upload of the file: nothing of it staged yet. */
  uploading(upload: FileUpload): void {
    this.upload = upload;
    this.staged = 0;
    this.append({ upload });
  }

  /** The file's blocks 0..staged-1 are staged to the upload. */
  stagedBlocks(staged: number): void {
    this.staged = staged;
    this.append({ staged });
  }

  private append(entry: Entry): void {
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`);
  }
}
