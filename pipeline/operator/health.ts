import type { BlobStorage } from '../blob/blob-storage.js';
import type { TaskBus } from '../bus/bus.js';
import type { Queryable } from '../db/pool.js';

/** One dependency's answer to a readiness check. */
export interface PartHealth {
  readonly part: 'postgres' | 'bus' | 'blob_storage';
  readonly ok: boolean;
  readonly error?: string;
}

/** A dependency must answer within this long to count as reachable. */
const CHECK_TIMEOUT_MS = 2_000;

/** What a process depends on: Postgres, the task bus, and the blob store when export is on. */
export interface ServiceDependencies {
  readonly pool: Queryable;
  /** Absent where a process has no bus of its own (a facade under test). */
  readonly bus?: TaskBus | undefined;
  readonly blobs: BlobStorage | undefined;
}

/** Asks every dependency at once whether it answers (`/readyz`). */
export async function checkReadiness(deps: ServiceDependencies): Promise<PartHealth[]> {
  const checks: [PartHealth['part'], () => Promise<unknown>][] = [
    ['postgres', () => deps.pool.query('SELECT 1')],
  ];
  const { bus, blobs } = deps;
  if (bus) checks.push(['bus', () => bus.check()]);
  if (blobs) checks.push(['blob_storage', () => blobs.check()]);
  return Promise.all(
    checks.map(async ([part, check]) => {
      try {
        await withTimeout(check(), CHECK_TIMEOUT_MS);
        return { part, ok: true };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        return { part, ok: false, error: code ?? (err as Error).message ?? 'unreachable' };
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
