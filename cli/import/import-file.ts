import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordFormat } from '../../records/file-records.js';
import { type RequestChunk, requestChunks } from '../../records/request-chunks.js';
import { resultsLines } from '../../records/results-lines.js';
import { CliError, EXIT } from '../cli-error.js';
import { type ForeignFile, openRecords } from '../files/read-records.js';
import { count, progressOnStderr } from '../progress.js';
import { errorMessage, type ServiceClient } from '../service-client.js';
import { ImportState, type RecordOutcome, type RunCounts } from './import-state.js';

/** What `userctl import FILE` was asked to do. */
export interface ImportFileOptions {
  readonly file: string;
  readonly format: RecordFormat;
  readonly identifier: string;
  readonly upsert: boolean;
  /** A dry run (`--dry-run`): the service checks and plans every record and writes none. */
  readonly dryRun?: boolean;
  readonly concurrency: number;
  readonly resultsFile: string;
  readonly stateFile: string;
  /** Another system's user file, mapped to records (`--from`). */
  readonly from?: ForeignFile;
}

/** A record's detail, as a status read and the results file give it. */
export interface Detail {
  readonly index: number;
  readonly outcome: RecordOutcome;
  readonly user_id?: string;
  readonly warnings?: unknown[];
  readonly errors?: unknown[];
}

/** An import task's status as the service answers it (decisions 2.3, docs/decisions.md). */
export interface ImportStatus {
  readonly id: string;
  readonly status: 'pending' | 'completed';
  readonly progress?: {
    processed: number;
    total: number;
    /** A file import: bytes of its upload taken in, of its size. */
    bytes_read?: number;
    bytes_total?: number;
  };
  readonly error?: unknown;
  readonly details?: readonly Detail[];
  /** The path of the next page of details, when more follow. */
  readonly details_next?: string;
  /** A signed URL of the results file: every detail, one JSON line each. */
  readonly results_url?: string;
}

/** One line of the results file: a record of the input and what became of it. */
interface ResultLine {
  position: number;
  outcome: RecordOutcome;
  user_id?: string;
  warnings?: unknown[];
  errors?: unknown[];
  /** The source members a `--from` reader found no place for. */
  unmapped?: readonly string[];
  /** The position of the user of the file this one was merged into, instead of being sent. */
  merged_into?: number;
}

export const ROUTE = '/_api/admin/users/import';
const POLL_MS = 500;

/**
 * Imports a file through the admin API: records packed into requests of at most 500 KB in file
 * order, `concurrency` requests in flight, each followed to completion; one results line per
 * input record, written in input order; a state journal so that the same command started again
 * sends none of the requests the service already accepted. Returns the exit code: 0 when every
 * record succeeded, 1 when some failed.
 */
export async function importFile(client: ServiceClient, options: ImportFileOptions): Promise<number> {
  const run = ImportState.runOf(options.file, options.identifier, options.upsert, {
    format: options.format,
    from: options.from ?? null,
    // A dry run's journal never stands for a run that writes.
    ...(options.dryRun ? { dry_run: true } : {}),
  });
  const state = ImportState.open(options.stateFile, run);
  const results = openSync(options.resultsFile, state.resumed ? 'r+' : 'w');
  ftruncateSync(results, state.resultsBytes); // drop lines written after the last journaled request
  let resultsBytes = state.resultsBytes;
  const counts: RunCounts = { ...state.counts };
  const input = await openRecords(options.file, options.format, options.from);
  const chunks = requestChunks(input.records, options)[Symbol.asyncIterator]();
  const totalBytes = Math.max(run.size, 1);

  const progress = progressOnStderr('import');
  const started = Date.now();
  const figures = { sent: 0, applied: 0, bytesDone: 0 };
  const inFlight = new Map<number, { processed: number; bytesEnd: number }>();
  const show = () => {
    if (figures.sent === 0) return; // nothing to tell yet (the service may not be reachable)
    const applied = figures.applied + [...inFlight.values()].reduce((n, c) => n + c.processed, 0);
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    progress.update({
      done: figures.bytesDone,
      total: totalBytes,
      detail: `${count(figures.sent)} records sent, ${count(applied)} applied, ${count(counts.failed)} failed`,
      rate: `${count(Math.round(applied / seconds))} records/s`,
    });
  };

  // Results wait here until every request before theirs is written: the file keeps input order.
  const finished = new Map<number, ResultLine[]>();
  const flush = () => {
    for (let next = state.flushed; finished.has(next); next = state.flushed) {
      const lines = finished.get(next) ?? [];
      finished.delete(next);
      const text = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
      resultsBytes += writeSync(results, text, resultsBytes); // at the end the journal knows
      for (const l of lines) {
        counts[l.outcome]++;
        counts.warnings += l.warnings?.length ?? 0;
        if (l.unmapped) counts.unmapped++;
      }
      state.written(next, resultsBytes, counts);
    }
  };

  // Records of one user in several requests apply in file order: a request waits for the earlier
  // ones in flight that name a user it names. Only the users of requests in flight are kept.
  const lastOfUser = new Map<string, Promise<void>>();
  const ordered = new Map<number, { earlier: Promise<unknown>; done: () => void }>();
  const order = (chunk: RequestChunk) => {
    const earlier = new Set<Promise<void>>();
    for (const user of chunk.users) {
      const last = lastOfUser.get(user);
      if (last) earlier.add(last);
    }
    let finish = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    for (const user of chunk.users) lastOfUser.set(user, finished);
    const done = () => {
      for (const user of chunk.users) if (lastOfUser.get(user) === finished) lastOfUser.delete(user);
      finish();
    };
    ordered.set(chunk.index, { earlier: Promise.all(earlier), done });
  };

  let reading = Promise.resolve();
  const nextChunk = async (): Promise<RequestChunk | undefined> => {
    // One reader at a time: the chunks come in order, and each is ordered as it comes.
    const turn = reading.then(async () => {
      const next = await chunks.next();
      if (!next.done) order(next.value);
      return next;
    });
    reading = turn.then(
      () => undefined,
      () => undefined,
    );
    const { value, done } = await turn;
    return done ? undefined : value;
  };

  async function runChunk(chunk: RequestChunk): Promise<void> {
    const bytesEnd = input.bytesRead();
    inFlight.set(chunk.index, { processed: 0, bytesEnd });
    let taskId = state.taskOf(chunk.index);
    if (!taskId) {
      await ordered.get(chunk.index)?.earlier;
      const answer = await client.call<{ id?: string }>('POST', ROUTE, chunk.body, {
        'idempotency-key': `${state.runId}-${chunk.index}`,
      });
      if (answer.status !== 200 || !answer.body?.id) {
        throw new CliError(
          `the service refused request ${chunk.index + 1} (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
        );
      }
      taskId = answer.body.id;
      state.accepted(chunk.index, taskId);
    }
    figures.sent += chunk.positions.length;
    const status = await followTask(client, taskId, ({ processed }) => {
      if (failure !== undefined) throw failure;
      inFlight.set(chunk.index, { processed, bytesEnd });
      show();
    });
    inFlight.delete(chunk.index);
    figures.applied += chunk.positions.length;
    figures.bytesDone = Math.max(figures.bytesDone, bytesEnd);
    finished.set(chunk.index, resultLines(chunk, status, options.dryRun === true));
    flush();
    show();
  }

  const ticker = setInterval(show, 1_000);
  let completed = false;
  // The first failure stops every sender: none takes another request or polls on.
  let failure: unknown;
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        try {
          for (let chunk = await nextChunk(); chunk && failure === undefined; chunk = await nextChunk()) {
            try {
              // A request whose results are written was done in an earlier run.
              if (chunk.index >= state.flushed) await runChunk(chunk);
            } finally {
              ordered.get(chunk.index)?.done();
              ordered.delete(chunk.index);
            }
          }
        } catch (err) {
          failure ??= err;
          throw err;
        }
      }),
    );
    completed = true;
  } finally {
    clearInterval(ticker);
    progress.stop(completed);
    closeSync(results);
  }
  return closingReport(counts, options, input.report());
}

/**
 * Prints the run's closing lines (its counts, and lines of the reader's own) and returns the exit
 * code: 0 when every record succeeded, 1 when some failed, 3 with warnings or unmapped members.
 */
export function closingReport(
  counts: RunCounts,
  options: Pick<ImportFileOptions, 'dryRun' | 'resultsFile'>,
  lines: readonly string[],
): number {
  const { warnings, unmapped, ...outcomes } = counts;
  const total = Object.values(outcomes).reduce((sum, n) => sum + n, 0);
  // Nothing said only inside the results file: warnings and members left out are counted here.
  const notes = `${count(warnings)} warnings, ${count(unmapped)} records with unmapped members`;
  process.stderr.write(
    options.dryRun
      ? `import (dry run, nothing written): ${count(total)} records: ${count(counts.would_insert)} would be inserted, ` +
          `${count(counts.would_update)} updated, ${count(counts.would_skip)} skipped, ${count(counts.failed)} failed; ` +
          `${notes}; results in ${options.resultsFile}\n`
      : `import: ${count(total)} records: ${count(counts.inserted)} inserted, ${count(counts.updated)} updated, ` +
          `${count(counts.skipped)} skipped, ${count(counts.failed)} failed; ${notes}; results in ${options.resultsFile}\n`,
  );
  for (const line of lines) process.stderr.write(`${line}\n`);
  if (counts.failed > 0) return EXIT.someFailed;
  return warnings > 0 || unmapped > 0 ? EXIT.withWarnings : EXIT.ok;
}

/**
 * Polls an import task until it completes, reporting its progress; then reads its details: from its
 * results file (one download, whatever the task's size) when the service wrote one, else page by page.
 */
export async function followTask(
  client: ServiceClient,
  taskId: string,
  onProgress: (progress: NonNullable<ImportStatus['progress']>) => void,
  { details: withDetails = true }: { details?: boolean } = {},
): Promise<ImportStatus> {
  const read = async (route: string) => {
    const answer = await client.call<ImportStatus>('GET', route);
    if (answer.status !== 200) {
      throw new CliError(
        `cannot read task ${taskId} (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
      );
    }
    return answer.body;
  };
  for (let delay = POLL_MS; ; delay = Math.min(delay * 1.5, 3_000)) {
    const status = await read(`${ROUTE}/${taskId}?details=false`);
    if (status.status === 'completed') {
      if (!withDetails) return status;
      if (status.results_url)
        return { ...status, details: await readResultsFile(taskId, status.results_url) };
      const details: NonNullable<ImportStatus['details']>[number][] = [];
      for (let next: string | undefined = `${ROUTE}/${taskId}`; next !== undefined; ) {
        const page = await read(next);
        details.push(...(page.details ?? []));
        next = page.details_next;
      }
      return { ...status, details };
    }
    onProgress(status.progress ?? { processed: 0, total: 0 });
    await sleep(delay);
  }
}

/** The details of a task's results file, read through its signed URL (one JSON line each). */
async function readResultsFile(taskId: string, url: string): Promise<NonNullable<ImportStatus['details']>> {
  const res = await fetch(url).catch((err: unknown) => {
    throw new CliError(`cannot download the results of task ${taskId}: ${(err as Error).message}`);
  });
  if (!res.ok) throw new CliError(`cannot download the results of task ${taskId} (${res.status})`);
  return resultsLines(await res.text());
}

/** The results lines of a request, its local failures among them, in input order. */
function resultLines(chunk: RequestChunk, status: ImportStatus, dryRun: boolean): ResultLine[] {
  const byIndex = new Map((status.details ?? []).map((d) => [d.index, d]));
  const lines: ResultLine[] = chunk.positions.map((position, i) => {
    const detail = byIndex.get(i);
    if (!detail) {
      // The task ended without this record (it failed as a whole): the record failed with it.
      return {
        position,
        outcome: 'failed',
        errors: [status.error ?? { message: 'the import task ended without it' }],
      };
    }
    return {
      position,
      outcome: detail.outcome,
      ...(detail.user_id ? { user_id: detail.user_id } : {}),
      ...(detail.warnings ? { warnings: detail.warnings } : {}),
      ...(detail.errors ? { errors: detail.errors } : {}),
    };
  });
  for (const line of lines) {
    const unmapped = chunk.unmapped.get(line.position);
    if (unmapped) line.unmapped = unmapped;
  }
  for (const [position, into] of chunk.merged) {
    // Its connection is sent with the user it is merged into (Cognito's social users).
    lines.push({ position, outcome: dryRun ? 'would_skip' : 'skipped', merged_into: into });
  }
  for (const f of chunk.localFailures) {
    lines.push({
      position: f.position,
      outcome: 'failed',
      errors: [{ name: 'Invalid', reason: 'UnreadableRecord', message: f.problem }],
    });
  }
  return lines.sort((a, b) => a.position - b.position);
}
