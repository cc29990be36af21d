import type { Pool } from '../db/pool.js';
import { renewLease, type TaskAttempt } from '../db/tasks/leases.js';
import { keepBeating } from '../keep-alive.js';

/** Why a task's work is told to stop. */
export type StopReason =
  /** The task ended elsewhere (cancelled, failed), or another attempt owns it now. */
  | 'ended'
  /** The lease could not be renewed for as long as it lasts: another worker may take the task. */
  | 'lost'
  /** This process is stopping: the task goes to another worker from its next safe point. */
  | 'draining'
  /** The work made no progress for the stall bound: the lease is given up, whatever the work awaits. */
  | 'stalled';

/** The reason of a task work's abort signal. */
export class TaskStop extends Error {
  override readonly name = 'TaskStop';
  constructor(readonly why: StopReason) {
    super(`the task's work was stopped (${why})`);
  }
}

/** How often a running attempt renews its lease (and saves progress, and learns of a cancel). */
const RENEW_MS = 500;
/**
 * How long before its lease ends an attempt that could not renew it stops: it must be gone before
 * the upkeep of another process can see the lease lapse.
 */
const STOP_BEFORE_LAPSE_MS = 1_000;

/** An attempt's lease, kept while its work runs. */
export interface HeldLease {
  /** Aborted with a TaskStop when the work must stop. */
  readonly signal: AbortSignal;
  /** Records progress, saved with the next renewal; a changed count is the work moving. */
  progress(processed: number): void;
  /** Tells that the work moved (a batch committed, bytes written) without a count to save. */
  advanced(): void;
  stop(): void;
}

/**
 * Renews the attempt's lease every half second until stopped. The signal is aborted when a renewal
 * finds the attempt no longer owns the task (`ended`), when no renewal succeeded for a lease's
 * length but a second (`lost`: Postgres is out of reach, and the upkeep elsewhere will soon offer the
 * task again), when the work made no progress for `stallMs` (`stalled`: a live process is not a
 * moving task), or when `draining` is aborted.
 */
export function keepLease(
  pool: Pool,
  attempt: TaskAttempt,
  leaseMs: number,
  draining: AbortSignal,
  stallMs: number,
): HeldLease {
  const aborter = new AbortController();
  const stop = (why: StopReason) => {
    if (!aborter.signal.aborted) aborter.abort(new TaskStop(why));
  };
  let processed: number | undefined;
  let movedAt = Date.now();
  let ownedUntil = Date.now() + leaseMs - STOP_BEFORE_LAPSE_MS;
  const onDrain = () => stop('draining');
  if (draining.aborted) onDrain();
  else draining.addEventListener('abort', onDrain, { once: true });
  const renewal = keepBeating(async () => {
    // A stalled attempt renews no more: the runner gives its lease up at once.
    if (Date.now() - movedAt > stallMs) return stop('stalled');
    if (Date.now() > ownedUntil) stop('lost');
    const asked = Date.now();
    // A missed renewal is harmless until the lease runs out.
    if (await renewLease(pool, attempt, leaseMs, processed))
      ownedUntil = asked + leaseMs - STOP_BEFORE_LAPSE_MS;
    else stop('ended');
  }, RENEW_MS);
  return {
    signal: aborter.signal,
    progress: (n) => {
      if (n !== processed) movedAt = Date.now();
      processed = n;
    },
    advanced: () => {
      movedAt = Date.now();
    },
    stop() {
      renewal.stop();
      draining.removeEventListener('abort', onDrain);
    },
  };
}
