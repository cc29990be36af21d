import type { ExportConfig } from '../config.js';
import { EXPORT_BUCKET, takeExportToken } from '../db/export-tokens.js';
import type { Pool, PoolClient } from '../db/pool.js';
import {
  countPendingImportRecords,
  countPendingTasks,
  findKeyedTask,
  insertTask,
  type KeyedTaskRow,
  lockAdmission,
  type NewTask,
} from '../db/tasks/admission.js';
import type { TaskRow } from '../db/tasks/task-rows.js';
import { withTransaction } from '../db/transaction.js';
import { ApiError } from '../errors.js';

// The one path by which a task is accepted, for both kinds: under the project's admission lock,
// a request sent again with its Idempotency-Key gets its task before any limit is checked; then
// the kind's limits; then the task and its message are recorded.

/** The limits a new task of each kind must pass. */
export type AdmissionLimits =
  | {
      readonly kind: 'export';
      /** Pending exports at most, and the UserExport bucket (decisions, Export). */
      readonly export: ExportConfig;
    }
  | {
      readonly kind: 'import';
      /** Records of pending imports at most; undefined: no limit (a replay, which an operator runs). */
      readonly pendingRecords: number | undefined;
    };

/** Seconds a refused import is asked to wait while the workers drain the backlog. */
const BACKLOG_RETRY_SECONDS = 5;

/**
 * Accepts `task` if its kind's limits allow it: the task an earlier request with the same
 * Idempotency-Key made, else the new pending task. A refused request takes nothing (no token).
 */
export function admitTask(pool: Pool, task: NewTask, limits: AdmissionLimits): Promise<TaskRow> {
  return withTransaction(pool, (client) => admitIn(client, task, limits));
}

/** admitTask inside a transaction of the caller's (a replay records its position with it). */
export async function admitIn(client: PoolClient, task: NewTask, limits: AdmissionLimits): Promise<TaskRow> {
  await lockAdmission(client, task.project, task.kind);
  if (task.idempotency) {
    const earlier = await findKeyedTask(client, task.project, task.kind, task.idempotency.key);
    if (earlier) return sameRequest(earlier, task.idempotency.digest);
  }
  await checkLimits(client, task.project, limits);
  const row = await insertTask(client, task);
  if (!row) throw new ApiError('TaskNotRecorded', 'the task was neither recorded nor found');
  return sameRequest(row, task.idempotency?.digest);
}

async function checkLimits(client: PoolClient, project: string, limits: AdmissionLimits): Promise<void> {
  if (limits.kind === 'import') {
    if (limits.pendingRecords === undefined) return;
    const pending = await countPendingImportRecords(client, project);
    if (pending < limits.pendingRecords) return;
    throw new ApiError(
      'ImportBacklogFull',
      'too many import records are waiting; send again later',
      { pending_records: pending, limit: limits.pendingRecords },
      { headers: { 'Retry-After': String(BACKLOG_RETRY_SECONDS) } },
    );
  }
  if ((await countPendingTasks(client, project, 'export')) >= limits.export.maxConcurrent)
    throw new ApiError('MaximumConcurrentJobLimitExceeded', 'an export is already running');
  const token = await takeExportToken(client, limits.export, project);
  if (!token.taken)
    throw new ApiError(
      'RateLimited',
      'too many exports requested',
      { bucket_name: EXPORT_BUCKET },
      { headers: { 'Retry-After': String(token.retryAfterSeconds) } },
    );
}

/** The task made for this key and body; IdempotencyKeyReused when the key came with another body. */
function sameRequest(row: KeyedTaskRow, digest: string | undefined): TaskRow {
  const { request_digest, ...task } = row;
  if (digest !== undefined && request_digest !== null && request_digest !== digest)
    throw new ApiError('IdempotencyKeyReused', 'this Idempotency-Key was sent with another request body');
  return task;
}
