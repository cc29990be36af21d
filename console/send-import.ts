import type { RequestChunk } from '../records/request-chunks.js';
import { resultsLines } from '../records/results-lines.js';
import { ApiProblem, call, type Detail, readText, type Task } from './admin-api.js';
import { follow } from './follow-task.js';
import type { ApiError } from './reason-words.js';

/** Requests in flight at once, as `userctl import` sends them by default. */
const CONCURRENCY = 4;
/** A request the service could not be reached for is tried this many times, a second apart. */
const UNREACHABLE_TRIES = 5;
/** The longest wait a Retry-After is honoured for. */
const MAX_RETRY_AFTER_S = 60;

/** What became of one record of the file: as userctl's results file writes it. */
export interface Outcome {
  readonly position: number;
  readonly outcome: string;
  readonly user_id?: string;
  readonly warnings?: { message: string }[];
  readonly errors?: ApiError[];
  /** Why the record was not sent (it failed before the service saw it, or was merged into another). */
  readonly problem?: string;
  /** The record of the file this one was merged into (Cognito's social users). */
  readonly merged_into?: number;
}

/** How far an import has come. */
export interface ImportProgress {
  readonly sent: number;
  readonly applied: number;
  readonly failed: number;
  readonly rate: number;
  readonly secondsLeft: number | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends the requests of an import as userctl does: `CONCURRENCY` at a time, each with an
 * Idempotency-Key of its own (a request sent again names the task the first one made), 429 and
 * 503 waited out per Retry-After, an unreachable service tried again; follows every task to its
 * end and returns each record's outcome in file order.
 */
export async function sendImport(
  chunks: readonly RequestChunk[],
  dry: boolean,
  listen: { onTask: (id: string) => void; onProgress: (progress: ImportProgress) => void },
): Promise<Outcome[]> {
  const run = crypto.randomUUID();
  const outcomes: Outcome[] = [];
  const tasks = new Map<number, Task>();
  const total = chunks.reduce((n, c) => n + c.positions.length, 0);
  const startedAt = performance.now();
  let sent = 0;
  let refusedRecords = 0;

  const report = () => {
    let applied = 0;
    let failed = refusedRecords;
    for (const task of tasks.values()) {
      applied += task.summary?.total ?? task.progress?.processed ?? 0;
      failed += task.summary?.failed ?? 0;
    }
    const rate = applied / Math.max((performance.now() - startedAt) / 1000, 0.001);
    listen.onProgress({
      sent,
      applied,
      failed,
      rate,
      secondsLeft: rate > 0 ? (total - applied) / rate : undefined,
    });
  };

  const sendOne = async (chunk: RequestChunk) => {
    for (const failure of chunk.localFailures)
      outcomes.push({ position: failure.position, outcome: 'failed', problem: failure.problem });
    for (const [position, into] of chunk.merged)
      outcomes.push({
        position,
        outcome: dry ? 'would_skip' : 'skipped',
        merged_into: into,
        problem: `merged into record ${into + 1}`,
      });
    if (chunk.positions.length === 0) return;
    let created: Task;
    try {
      created = await post(chunk.body, `${run}.${chunk.index}`);
    } catch (err) {
      // The service refused the request as a whole: each of its records fails with its reason.
      const problem = err instanceof Error ? err.message : String(err);
      for (const position of chunk.positions) outcomes.push({ position, outcome: 'failed', problem });
      refusedRecords += chunk.positions.length;
      report();
      return;
    }
    listen.onTask(created.id);
    sent += chunk.positions.length;
    report();
    const task = await follow(`/_api/admin/users/import/${created.id}?details=false`, (read) => {
      tasks.set(chunk.index, read);
      report();
    });
    if (task.error) {
      // The task itself could not finish: its records are failed with its reason.
      const problem = `${task.error.reason}: ${task.error.message}`;
      for (const position of chunk.positions) outcomes.push({ position, outcome: 'failed', problem });
      refusedRecords += chunk.positions.length;
      return;
    }
    for (const detail of await allDetails(task)) {
      outcomes.push({ ...outcomeOf(detail), position: chunk.positions[detail.index] ?? -1 });
    }
  };

  const queue = [...chunks];
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
      for (let chunk = queue.shift(); chunk; chunk = queue.shift()) await sendOne(chunk);
    }),
  );
  report();
  return outcomes.sort((a, b) => a.position - b.position);
}

async function post(body: string, key: string): Promise<Task> {
  for (let unreachable = 0; ; ) {
    try {
      return await call<Task>('POST', '/_api/admin/users/import', body, { 'Idempotency-Key': key });
    } catch (err) {
      if (!(err instanceof ApiProblem)) throw err;
      if (err.status === 429 || err.status === 503) {
        await sleep(Math.min(err.retryAfterSeconds ?? 1, MAX_RETRY_AFTER_S) * 1000);
        continue;
      }
      if (err.status === 0 && ++unreachable < UNREACHABLE_TRIES) {
        await sleep(1000);
        continue;
      }
      throw err;
    }
  }
}

/**
 * Every detail of a completed import: its results file in one read when it has one, else page
 * after page.
 */
export async function allDetails(task: Task): Promise<Detail[]> {
  if (task.results_url) {
    return resultsLines<Detail>(await readText(`/_api/admin/users/import/${task.id}/results`));
  }
  const details: Detail[] = [];
  let path: string | undefined = `/_api/admin/users/import/${task.id}?limit=10000`;
  while (path) {
    const page: Task = await call<Task>('GET', path);
    details.push(...(page.details ?? []));
    path = page.details_next;
  }
  return details;
}

export function outcomeOf(detail: Detail): Omit<Outcome, 'position'> {
  return {
    outcome: detail.outcome,
    ...(detail.user_id ? { user_id: detail.user_id } : {}),
    ...(detail.warnings?.length ? { warnings: detail.warnings } : {}),
    ...(detail.errors?.length ? { errors: detail.errors } : {}),
  };
}
