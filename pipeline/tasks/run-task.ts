import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskKind } from '../../schemas/index.js';
import type { TakenTask } from '../bus/bus.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { type ClaimedTask, claimTask, releaseTask } from '../db/tasks/leases.js';
import { ApiError, AttemptLost, classifyFault, EngineError, type Fault } from '../errors.js';
import type { Logger } from '../log.js';
import { stalledAttempts } from '../operator/metrics.js';
import { failAndRefund, TASK_ENDINGS } from './task-failure.js';
import { keepLease, type StopReason, TaskStop } from './task-lease.js';

/** This process, as the attempts and export parts it claims name it. */
export const WORKER = `${hostname()}:${process.pid}`;

/** What a task's work gets from the runner. */
export interface TaskRun {
  readonly task: ClaimedTask;
  /**
   * Aborted (with a TaskStop) when the work must stop: the task ended elsewhere (cancelled), the
   * attempt lost its lease, or this process is draining. An import stops after the batch at hand.
   */
  readonly signal: AbortSignal;
  /** Reports the units done so far (export: users written); saved with the next renewal. */
  progress(processed: number): void;
  /**
   * Tells the runner the work moved without a count (a batch committed, bytes written): an attempt
   * that neither reports progress nor moves for TASK_STALL_SECONDS gives its lease up.
   */
  advanced(): void;
  /** The task's log: every line names the task, its attempt and the admin who asked for it. */
  readonly log: Logger;
  /** How long the attempt's lease lasts: an import's batches renew it as they commit. */
  readonly leaseMs: number;
}

/** Attempts at most for a fault with no code (a connection that ended, or a bug). */
const MAX_UNKNOWN_ATTEMPTS = 5;

/** The life of every task: claim, lease, retries with backoff, hand-over, and the failure that ends it. */
export interface TaskRunner {
  /**
   * Claims the next task of the kind for this process (db/tasks/leases.ts: handed-over tasks
   * first, then fair across projects; the message, absent when a slot that just freed looks for
   * work, only wakes the slot) and starts `work` on it with the task's message body, which
   * completes the task itself; resolves as soon as the claim is decided, with the work running on
   * (undefined: no task can be taken, as when a message arrives twice). Transient faults are
   * retried with backoff and jitter for `config.taskRetrySeconds`; any other fault ends the task
   * failed (an export's token given back). Throws when the claim could not be made (the database
   * is down, or this process is draining), so that the bus delivers the message again.
   */
  take(
    kind: TaskKind,
    message: { readonly task_id: string; readonly body: string } | undefined,
    work: (run: TaskRun, body: string) => Promise<void>,
  ): Promise<TakenTask | undefined>;
}

/**
 * The runner of this process's tasks. Once `draining` is aborted it claims nothing more, and each
 * running task stops at its next safe point and is released for another worker.
 */
export function taskRunner(
  pool: Pool,
  config: ServiceConfig,
  log: Logger,
  draining: AbortSignal,
): TaskRunner {
  const leaseMs = config.taskLeaseSeconds * 1000;

  async function runClaimed(
    kind: TaskKind,
    task: ClaimedTask,
    work: (run: TaskRun) => Promise<void>,
  ): Promise<void> {
    const taskLog = log.child({
      task_id: task.id,
      project_id: task.project_id,
      kind,
      attempt: task.attempt,
      ...(task.requested_by ?? {}),
    });
    const lease = keepLease(pool, task, leaseMs, draining, config.taskStallSeconds * 1000);
    const stalled = stallOf(lease.signal);
    const firstTry = Date.now();
    try {
      for (let retry = 1; ; retry++) {
        try {
          const started = Date.now();
          const running = work({
            task,
            signal: lease.signal,
            progress: lease.progress,
            advanced: lease.advanced,
            log: taskLog,
            leaseMs,
          });
          // Work whose await never settles is left behind once stalled: its writes are fenced by
          // the attempt, and another worker goes on from the last committed point.
          running.catch(() => {});
          await Promise.race([running, stalled]);
          taskLog.info({ ms: Date.now() - started, retry }, `${kind} completed`);
          return;
        } catch (err) {
          const stopped = stopReason(lease.signal, err);
          if (stopped) return await endStopped(kind, task, stopped, taskLog);
          const fault = classifyFault(err);
          if (shouldRetry(fault, retry, Date.now() - firstTry, config.taskRetrySeconds)) {
            // Retrying is the runner at work, not a stall: the retry window bounds an outage.
            lease.advanced();
            const delay = backoffMs(retry);
            taskLog.warn({ err, retry, retry_in_ms: delay, fault }, `${kind} interrupted; retrying`);
            await sleep(delay, undefined, { signal: lease.signal }).catch(() => {});
            const stoppedMeanwhile = stopReason(lease.signal, undefined);
            if (stoppedMeanwhile) return await endStopped(kind, task, stoppedMeanwhile, taskLog);
            continue;
          }
          taskLog.error({ err, retry, fault }, `${kind} failed`);
          await failAndRefund(pool, config.export, task.id, failureOf(kind, err, fault), { attempt: task });
          return;
        }
      }
    } catch (err) {
      // Postgres is out of reach: the lease lapses, and the upkeep offers the task again.
      taskLog.warn({ err }, `${kind}: how this attempt ended could not be recorded; its lease will lapse`);
    } finally {
      lease.stop();
    }
  }

  async function endStopped(kind: TaskKind, task: ClaimedTask, why: StopReason, taskLog: Logger) {
    if (why === 'draining') {
      await releaseTask(pool, task);
      taskLog.info(`${kind} released: this worker is stopping; another goes on from here`);
    } else if (why === 'stalled') {
      stalledAttempts.inc({ kind });
      taskLog.warn(
        { stall_seconds: config.taskStallSeconds },
        `${kind} gave up its lease: no progress for ${config.taskStallSeconds} s; another worker goes on from here`,
      );
      await releaseTask(pool, task, 'stalled');
    } else if (why === 'lost') {
      taskLog.warn(`${kind} stopped: this attempt lost its lease`);
    } else {
      taskLog.info(`${kind} stopped: the task was cancelled, or is another attempt's now`);
    }
  }

  return {
    async take(kind, message, work) {
      // A draining process claims nothing: a message comes again, a freed slot asks no more.
      if (draining.aborted) {
        if (!message) return undefined;
        throw new TaskStop('draining');
      }
      const task = await claimTask(pool, kind, message?.task_id ?? null, {
        owner: WORKER,
        leaseMs,
        runningTasksLimit: config.projectRunningTasksLimit,
      });
      if (!task) return undefined;
      if (message && task.id !== message.task_id)
        log.info({ task_id: task.id, kind, instead_of: message.task_id }, `${kind} taken in its turn`);
      // The body is the outbox's unless the task is the message's own.
      const body = task.message ?? message?.body ?? '';
      return { finished: runClaimed(kind, task, (run) => work(run, body)) };
    },
  };
}

/** Rejects with the lease's TaskStop once the attempt stalled (never settles otherwise). */
function stallOf(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const onAbort = () => {
      if (signal.reason instanceof TaskStop && signal.reason.why === 'stalled') reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Why the work stopped when it was told to, or found it no longer owned the task. */
function stopReason(signal: AbortSignal, err: unknown): StopReason | undefined {
  if (signal.aborted && signal.reason instanceof TaskStop) return signal.reason.why;
  return err instanceof AttemptLost ? 'ended' : undefined;
}

function shouldRetry(fault: Fault, retry: number, elapsedMs: number, windowSeconds: number): boolean {
  if (fault.kind === 'unknown' && retry >= MAX_UNKNOWN_ATTEMPTS) return false;
  if (fault.kind !== 'transient' && fault.kind !== 'unknown') return false;
  return elapsedMs + backoffMs(retry) <= windowSeconds * 1000;
}

/** Exponential backoff from 250 ms, capped at 15 s, with full jitter over its upper half. */
function backoffMs(retry: number): number {
  const ceiling = Math.min(15_000, 250 * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** The error a failed task shows: its own when it has one, else what gave out. */
function failureOf(kind: TaskKind, err: unknown, fault: Fault): ApiError {
  if (err instanceof ApiError) return err;
  if (fault.kind === 'transient') {
    const dependency = fault.dependency ?? 'a dependency';
    return new ApiError(
      'DependencyUnavailable',
      `the ${kind} was given up: ${dependency} stayed unavailable (${fault.code})`,
      { dependency, code: fault.code },
    );
  }
  // An engine fault's message names no user data: the admin reads what went wrong.
  if (err instanceof EngineError && err.reason) return new ApiError(err.reason, err.message);
  if (err instanceof EngineError)
    return new ApiError('UnexpectedError', `the ${kind} could not finish: ${err.message}`, {
      code: err.code,
    });
  return TASK_ENDINGS.unexpected(kind);
}
