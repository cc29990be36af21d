import type { BlobStorage } from '../blob/blob-storage.js';
import type { TaskBus } from '../bus/bus.js';
import type { Queryable } from '../db/pool.js';

/**
 * One dependency's answer to a readiness check: its name and whether it answered. What went wrong
 * is not said: the answer is for probes, and internal error text is for the log.
 */
export interface PartHealth {
  readonly part: 'postgres' | 'bus' | 'blob_storage' | 'workers';
  readonly ok: boolean;
}

/** A dependency must answer within this long to count as reachable. */
const CHECK_TIMEOUT_MS = 2_000;
/** How long one round of checks answers every readiness probe: probes never open a check each. */
const READINESS_CACHE_MS = 2_000;

/**
 * A readiness probe that asks the dependencies at most once per `READINESS_CACHE_MS`: every call
 * in that window, and every call while a round is under way, gets the answer of the same round.
 */
export function readinessProbe(deps: ServiceDependencies): () => Promise<PartHealth[]> {
  let round: { answer: Promise<PartHealth[]>; at: number } | undefined;
  return () => {
    const now = Date.now();
    if (!round || now - round.at >= READINESS_CACHE_MS) {
      const answer = checkReadiness(deps);
      round = { answer, at: now };
      // The window starts when the answer is in, so a slow round is not asked again at once.
      void answer.then(() => {
        if (round?.answer === answer) round.at = Date.now();
      });
    }
    return round.answer;
  };
}

/** What a process depends on: Postgres, the task bus, and the blob store when export is on. */
export interface ServiceDependencies {
  readonly pool: Queryable;
  /** Absent where a process has no bus of its own (a facade under test). */
  readonly bus?: TaskBus | undefined;
  readonly blobs: BlobStorage | undefined;
  /** A worker process's workers: ready while they have joined the bus and claim (not draining). */
  readonly workers?: { claiming(): boolean } | undefined;
}

/** Asks every dependency at once whether it answers. */
async function checkReadiness(deps: ServiceDependencies): Promise<PartHealth[]> {
  // A check answers in time (false: it answered no), or fails.
  const checks: [PartHealth['part'], () => Promise<unknown>][] = [
    ['postgres', () => deps.pool.query('SELECT 1')],
  ];
  const { bus, blobs, workers } = deps;
  if (bus) checks.push(['bus', () => bus.check()]);
  if (blobs) checks.push(['blob_storage', () => blobs.check()]);
  if (workers) checks.push(['workers', async () => workers.claiming()]);
  return Promise.all(
    checks.map(async ([part, check]) => {
      try {
        const answer = await withTimeout(check(), CHECK_TIMEOUT_MS);
        return { part, ok: answer !== false };
      } catch {
        return { part, ok: false };
      }
    }),
  );
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
