import type { ExportConfig } from '../config.js';
import { refundExport } from '../db/export-tokens.js';
import type { Queryable } from '../db/pool.js';
import { type FailedTask, failTask } from '../db/tasks/endings.js';
import type { TaskAttempt } from '../db/tasks/leases.js';
import { ApiError } from '../errors.js';

/** Why a task ended without finishing, beyond an error of its own work (docs/decisions.md, Tasks). */
export const TASK_ENDINGS = {
  expired: () => new ApiError('TaskExpired', 'the workers running the task stopped without a word too often'),
  timedOut: () => new ApiError('TaskTimedOut', 'the export ran longer than allowed'),
  cancelled: () => new ApiError('Cancelled', 'the export was cancelled'),
  unexpected: (what: string) => new ApiError('UnexpectedError', `the ${what} could not finish`),
} as const;

/** Gives back what failed tasks took: an export's UserExport token. */
export async function refundFailedTasks(
  db: Queryable,
  limits: ExportConfig,
  failed: readonly FailedTask[],
): Promise<void> {
  for (const task of failed) if (task.kind === 'export') await refundExport(db, limits, task.project_id);
}

/**
 * Ends a pending task failed with `error` and refunds it; false when it had already ended. A task
 * the service could not finish is refunded; one the admin cancels only when no worker had taken it
 * yet: a cancel does not give back the scan it cut short, or create-then-cancel would be a way
 * around the rate limit. Given the attempt that fails it, nothing happens unless it still owns the task.
 */
export async function failAndRefund(
  db: Queryable,
  limits: ExportConfig,
  id: string,
  error: ApiError,
  { cancelled = false, attempt }: { cancelled?: boolean; attempt?: TaskAttempt } = {},
): Promise<boolean> {
  const failed = await failTask(db, id, error, attempt);
  if (failed && !(cancelled && failed.started)) await refundFailedTasks(db, limits, [failed]);
  return failed !== undefined;
}
