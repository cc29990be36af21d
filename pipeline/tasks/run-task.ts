import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskKind } from '../../schemas/index.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { type ClaimedTask, claimTask, heartbeat } from '../db/tasks.js';
import { ApiError, classifyFault, type Fault } from '../errors.js';
import type { Logger } from '../log.js';
import { failAndRefund, TASK_ENDINGS } from './task-failure.js';

/** What a task's work gets from the runner. */
export interface TaskRun {
  readonly task: ClaimedTask;
  /** Aborted when the task ended elsewhere (cancelled, expired, timed out): stop and clean up. */
  readonly signal: AbortSignal;
  /** Reports the units done so far (export: users written); saved with the next heartbeat. */
  progress(processed: number): void;
  /** The task's log: every line names the task and the admin who asked for it. */
  readonly log: Logger;
}

/** How often a running task shows it is alive (and saves its progress, and learns of a cancel). */
const HEARTBEAT_MS = 500;
/** Attempts at most for a fault with no code (a connection that ended, or a bug). */
const MAX_UNKNOWN_ATTEMPTS = 5;

/** The life of every task: claim, heartbeat, retries with backoff, and the failure that ends it. */
export interface TaskRunner {
  /**
   * Runs (or resumes) a task with `work`, which completes the task itself. A delivered message of
   * a task that already ended does nothing, so a message may arrive twice. Transient faults are
   * retried with backoff and jitter for `config.taskRetrySeconds`; any other fault ends the task
   * failed (an export's token given back). Throws only when even that could not be recorded (the
   * database is down), so that the bus delivers the message again.
   */
  run(kind: TaskKind, id: string, work: (run: TaskRun) => Promise<void>): Promise<void>;
}

export function taskRunner(pool: Pool, config: ServiceConfig, log: Logger): TaskRunner {
  return {
    async run(kind, id, work) {
      const firstTry = Date.now();
      // Every line of the task names it, and the request and admin that asked for it.
      let taskLog = log.child({ task_id: id, kind });
      for (let attempt = 1; ; attempt++) {
        let ended = false;
        const aborter = new AbortController();
        let processed: number | undefined;
        const beat = setInterval(() => {
          heartbeat(pool, id, processed).then(
            (pending) => {
              if (!pending && !aborter.signal.aborted) {
                ended = true;
                aborter.abort(new Error('the task ended elsewhere'));
              }
            },
            () => {}, // a missed heartbeat is harmless; the work itself meets the outage
          );
        }, HEARTBEAT_MS);
        try {
          const task = await claimTask(pool, kind, id);
          if (!task) return;
          taskLog = log.child({ task_id: id, kind, ...(task.requested_by ?? {}) });
          const started = Date.now();
          await work({ task, signal: aborter.signal, progress: (n) => (processed = n), log: taskLog });
          taskLog.info({ ms: Date.now() - started, attempt }, `${kind} completed`);
          return;
        } catch (err) {
          if (ended) {
            taskLog.info(`${kind} stopped: the task was cancelled or expired`);
            return;
          }
          const fault = classifyFault(err);
          if (shouldRetry(fault, attempt, Date.now() - firstTry, config.taskRetrySeconds)) {
            const delay = backoffMs(attempt);
            taskLog.warn({ err, attempt, retry_in_ms: delay, fault }, `${kind} interrupted; retrying`);
            await sleep(delay);
            continue;
          }
          taskLog.error({ err, attempt, fault }, `${kind} failed`);
          await failAndRefund(pool, config.export, id, failureOf(kind, err, fault));
          return;
        } finally {
          clearInterval(beat);
        }
      }
    },
  };
}

function shouldRetry(fault: Fault, attempt: number, elapsedMs: number, windowSeconds: number): boolean {
  if (fault.kind === 'unknown' && attempt >= MAX_UNKNOWN_ATTEMPTS) return false;
  if (fault.kind !== 'transient' && fault.kind !== 'unknown') return false;
  return elapsedMs + backoffMs(attempt) <= windowSeconds * 1000;
}

/** Exponential backoff from 250 ms, capped at 15 s, with full jitter over its upper half. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(15_000, 250 * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** The error a failed task shows: its own when it has one, else what gave out. */
function failureOf(kind: TaskKind, err: unknown, fault: Fault): ApiError {
  if (err instanceof ApiError) return err;
  if (fault.kind === 'transient') {
    const dependency = fault.dependency ?? 'a dependency';
    return new ApiError(
      'ServiceUnavailable',
      'DependencyUnavailable',
      `the ${kind} was given up: ${dependency} stayed unavailable (${fault.code})`,
      { dependency, code: fault.code },
    );
  }
  return TASK_ENDINGS.unexpected(kind);
}
