import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Queryable } from '../../pipeline/db/pool.js';

/**
 * A count the bench takes from the environment (`fallback` when unset). Anything but a positive
 * whole number stops the run: a mistyped size must not measure another one.
 */
export function countSetting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const count = Number(text);
  if (!Number.isSafeInteger(count) || count < 1) {
    process.stderr.write(`${name}=${text} is not a positive whole number\n`);
    process.exit(2);
  }
  return count;
}

/** The middle of some measurements (the upper middle of an even count); NaN of none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Throughput of `clients` concurrent loops of `call`, in calls per second. */
export async function throughput(
  clients: number,
  seconds: number,
  call: () => Promise<void>,
): Promise<number> {
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (process.hrtime.bigint() < deadline) {
        await call();
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * How often the bench looks whether the tasks it times have completed. Their time is read from
 * the task rows' `completed_at`, so the poll can be slow and leave the machine to the work it times.
 */
export const COMPLETION_POLL_MS = 250;

/**
 * When the last of the tasks completed, by the task rows' clock (the same as Date.now()), so that
 * the poll can be slow and leave the machine to the work it times.
 */
export async function tasksCompletedAt(pool: Queryable, ids: readonly string[]): Promise<Date> {
  for (;;) {
    const { rows } = await pool.query<{ pending: number; last: Date | null }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, max(completed_at) AS last
         FROM tasks WHERE id = ANY($1)`,
      [ids],
    );
    if (rows[0]?.pending === 0 && rows[0].last) return rows[0].last;
    await sleep(COMPLETION_POLL_MS);
  }
}

/**
 * How many rounds `make bench` measures a goal that one run on a shared machine leaves noisy
 * (BENCH_ROUNDS, default 3; seen on this machine: one import 0.63 and the next 0.95 of raw COPY).
 * Each round measures the baseline and the value one after the other; a row keeps the best
 * round of each side, so that a stall of the machine during one measurement moves neither.
 */
const ROUNDS = countSetting('BENCH_ROUNDS', 3);

/** The results of `measure` run ROUNDS times, one round after the other. */
export async function rounds<T>(measure: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let n = 0; n < ROUNDS; n++) results.push(await measure());
  return results;
}

/**
 * Writes every dirty buffer out before a measured write: each side of a comparison starts with
 * none of the other's to flush, and (the server's max_wal_size being well above one side's WAL)
 * no checkpoint lands inside either.
 */
export async function checkpoint(db: Queryable): Promise<void> {
  await db.query('CHECKPOINT');
}

/** How long a section waits at most for the work of the one before it to end. */
const IDLE_TIMEOUT_MS = 10 * 60_000;

/**
 * Waits until no other session of the bench database runs a statement (the work a section before
 * left behind has ended), and returns how long that took.
 */
export async function waitUntilIdle(databaseUrl: string): Promise<number> {
  const started = Date.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ busy: number }>(
        `SELECT count(*)::int AS busy FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
      );
      if (rows[0]?.busy === 0) return Date.now() - started;
      if (Date.now() - started > IDLE_TIMEOUT_MS) throw new Error('the bench database stayed busy');
      await sleep(COMPLETION_POLL_MS);
    }
  } finally {
    await client.end();
  }
}
