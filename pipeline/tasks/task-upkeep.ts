import type { BlobStorage } from '../blob/blob-storage.js';
import type { TaskBus } from '../bus/bus.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { sweepQueueLog } from '../db/task-queue.js';
import { failAbandonedTasks } from '../db/tasks/endings.js';
import { offerLapsedTasks } from '../db/tasks/leases.js';
import { offerPassedOverTasks, takeOutboxMessages } from '../db/tasks/outbox.js';
import { withTransaction } from '../db/transaction.js';
import { takeUpkeepTurn } from '../db/upkeep-jobs.js';
import { sweepChangeLog } from '../db/user-change-log.js';
import { deleteEventsBefore } from '../db/webhook-deliveries.js';
import type { Logger } from '../log.js';
import { startRelayLoop } from '../relay-loop.js';
import {
  deleteAbandonedTaskFiles,
  deleteUnnamedTaskFiles,
  sweepExpiredTasks,
  sweepImportFiles,
} from './retention.js';
import { refundFailedTasks, TASK_ENDINGS } from './task-failure.js';

/** What keeps every task moving: the outbox relay, the end of abandoned tasks, retention. */
export interface TaskUpkeep {
  /** A task was just created: relay its message now rather than at the next round. */
  wake(): void;
  stop(): Promise<void>;
}

/** How often the outbox is relayed without a wake-up; how often abandoned tasks are looked for. */
const RELAY_EVERY_MS = 250;
const ABANDONED_EVERY_MS = 1_000;
const RETENTION_EVERY_MS = 60_000;
const OUTBOX_BATCH = 100;
/**
 * How long a task passed over at its project's bound of running tasks waits, its project claiming
 * nothing meanwhile, before its message goes out again.
 */
const PASSED_OVER_SECONDS = 30;
/** How often they are looked for: a few times within that wait. */
const PASSED_OVER_EVERY_MS = 10_000;

/**
 * Runs the upkeep of tasks in this process until stopped. Every API and worker process runs one,
 * so nothing depends on one of them being up; each round is safe to run in several at once, and
 * the sweeps (abandoned files, passed-over tasks, retention) run in one process of the deployment
 * per turn (sql/035_upkeep_jobs.sql), so that their cost does not grow with the processes.
 * - The relay publishes the outbox on the bus and deletes what it published; a bus that is down
 *   leaves the rows for the next round, so a task accepted during an outage is published after it.
 * - A task passed over while its project ran its bound of tasks, with nothing left to wake it (the
 *   slot its project freed died first), is offered again after a while.
 * - A task whose lease lapsed (its worker died) is offered again through the outbox; one that
 *   lapsed `taskMaxLapses` times ends `TaskExpired`, and an export running past its time limit
 *   `TaskTimedOut`; an export's token is given back. A task waiting on the bus never expires.
 * - Completed tasks past retention are deleted with their files; the embedded queue's processed
 *   messages once past their keep (the import log's retention for imports).
 * - An export file that no task names is deleted: at once when its attempt is known to be over,
 *   else once it is older than the retention.
 * - Task events, with their webhook deliveries and attempts, are deleted once past the webhooks'
 *   give-up time and the retention after it; the change feed's events once past its retention.
 */
export function startTaskUpkeep(
  pool: Pool,
  bus: TaskBus,
  blobs: BlobStorage | undefined,
  config: ServiceConfig,
  log: Logger,
  projectIds: () => readonly string[],
): TaskUpkeep {
  const round = upkeepRounds(pool, bus, blobs, config, log, projectIds);
  const loop = startRelayLoop('task upkeep round', RELAY_EVERY_MS, log, round);
  return { wake: loop.wake, stop: loop.stop };
}

/**
 * The rounds of one process's upkeep: each call is a round, which does what is due of it (every
 * part at the first call); true when the relay left messages waiting (a full batch).
 */
export function upkeepRounds(
  pool: Pool,
  bus: TaskBus,
  blobs: BlobStorage | undefined,
  config: ServiceConfig,
  log: Logger,
  projectIds: () => readonly string[],
): () => Promise<boolean> {
  const due = { abandoned: 0, passedOver: 0, retention: 0 };

  async function relay(): Promise<number> {
    return withTransaction(pool, async (client) => {
      const messages = await takeOutboxMessages(client, OUTBOX_BATCH);
      for (const message of messages) await bus.publish(message);
      return messages.length;
    });
  }

  async function endAbandoned(): Promise<void> {
    const offered = await offerLapsedTasks(pool, config.taskMaxLapses);
    if (offered.length > 0) log.warn({ tasks: offered }, 'tasks whose lease lapsed offered again');
    const failed = await failAbandonedTasks(
      pool,
      { maxLapses: config.taskMaxLapses, exportLimitSeconds: config.export.timeLimitSeconds },
      { expired: TASK_ENDINGS.expired(), timedOut: TASK_ENDINGS.timedOut() },
    );
    if (failed.length === 0) return;
    log.warn({ tasks: failed.map((t) => t.id) }, 'abandoned tasks ended');
    await refundFailedTasks(pool, config.export, failed);
  }

  /** Completed tasks, files and rows past their keep: the sweeps of one turn. */
  async function sweepRetained(): Promise<void> {
    const ids = await sweepExpiredTasks(pool, blobs, config.taskRetentionSeconds, log);
    if (ids.length > 0) log.info({ tasks: ids.length }, 'tasks past retention deleted');
    const files = blobs
      ? await deleteUnnamedTaskFiles(pool, blobs, config.taskRetentionSeconds, projectIds())
      : [];
    if (files.length > 0) log.warn({ files }, 'task files that no task names deleted after retention');
    const importFiles = blobs ? await sweepImportFiles(pool, blobs) : 0;
    if (importFiles > 0)
      log.info({ files: importFiles }, 'unused uploads and imported files past their keep deleted');
    const logged = await sweepQueueLog(pool, config.importLogRetentionSeconds);
    if (logged > 0) log.info({ messages: logged }, 'processed queue messages past their keep deleted');
    // An event's deliveries have all ended by its give-up time; their attempts stay readable
    // for the task retention after it.
    const events = await deleteEventsBefore(
      pool,
      config.webhooks.giveUpSeconds + config.taskRetentionSeconds,
    );
    if (events > 0) log.info({ events }, 'task events past their keep deleted');
    const changes = await sweepChangeLog(pool, config.changesRetentionSeconds);
    if (changes > 0) log.info({ changes }, 'change feed events past their keep deleted');
  }

  /** One round of the upkeep; true when the relay left messages waiting (a full batch). */
  async function round(): Promise<boolean> {
    const now = Date.now();
    // Lapsed leases first, in every process (a look by index at the running tasks): a task offered
    // again goes out with this round's relay. The sweeps below take turns across the deployment.
    if (now >= due.abandoned) {
      due.abandoned = now + ABANDONED_EVERY_MS;
      await endAbandoned();
      if (blobs && (await takeUpkeepTurn(pool, 'abandoned-files', ABANDONED_EVERY_MS))) {
        const files = await deleteAbandonedTaskFiles(pool, blobs);
        if (files.length > 0) log.info({ files }, 'files of abandoned export attempts deleted');
      }
    }
    if (now >= due.passedOver) {
      due.passedOver = now + PASSED_OVER_EVERY_MS;
      if (await takeUpkeepTurn(pool, 'passed-over', PASSED_OVER_EVERY_MS)) {
        const passed = await offerPassedOverTasks(pool, PASSED_OVER_SECONDS, config.projectRunningTasksLimit);
        if (passed.length > 0)
          log.warn(
            { tasks: passed },
            'tasks passed over at their project bound, with nothing to wake them, offered again',
          );
      }
    }
    const relayed = await relay();
    if (now >= due.retention) {
      const every = Math.min(RETENTION_EVERY_MS, config.taskRetentionSeconds * 1000);
      due.retention = now + every;
      // A process without the blob storage sweeps what needs none, in turns of its own.
      if (await takeUpkeepTurn(pool, blobs ? 'retention' : 'retention-without-files', every))
        await sweepRetained();
    }
    return relayed === OUTBOX_BATCH;
  }

  return round;
}
