import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../pipeline/db/pool.js';
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
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS) || 3);

/** The results of `measure` run ROUNDS times, one round after the other. */
export async function rounds<T>(measure: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let n = 0; n < ROUNDS; n++) results.push(await measure());
  return results;
}
