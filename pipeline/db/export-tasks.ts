import type { ExportConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { Pool, Queryable } from './pool.js';
import { giveBackToken, takeToken } from './rate-limits.js';
import { countPendingTasks, findIdempotentTask, insertTask, type NewTask, type TaskRow } from './tasks.js';
import { withTransaction } from './transaction.js';

/** The rate limit bucket of export initiations (decisions 7). */
export const EXPORT_BUCKET = 'UserExport';

/** The row of a project's UserExport bucket: every project has its own. */
function bucketRow(project: string): string {
  return `${project}/${EXPORT_BUCKET}`;
}

/** Too many export initiations: the caller may try again after `retryAfterSeconds`. */
function rateLimited(retryAfterSeconds: number): ApiError {
  return new ApiError(
    'RateLimited',
    'too many exports requested',
    { bucket_name: EXPORT_BUCKET },
    { headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}

/**
 * Records a new pending export if the project may start one: fewer pending exports than allowed
 * (MaximumConcurrentJobLimitExceeded), then a token of the project's UserExport bucket
 * (RateLimited). Both checks and the insert are one transaction, serialized per project, so two
 * requests cannot both slip through; a refused request takes no token. A request sent again with
 * its Idempotency-Key gets its task before any of these checks.
 */
export async function admitExport(
  pool: Pool,
  limits: ExportConfig,
  task: Omit<NewTask, 'kind' | 'total'>,
): Promise<TaskRow> {
  return withTransaction(pool, async (client) => {
    await client.query(
      `SELECT pg_advisory_xact_lock(hashtext('export-admission:' || current_schema() || $1))`,
      [task.project],
    );
    const earlier = await findIdempotentTask(client, task.project, 'export', task.idempotency);
    if (earlier) return earlier;
    if ((await countPendingTasks(client, task.project, 'export')) >= limits.maxConcurrent) {
      throw new ApiError('MaximumConcurrentJobLimitExceeded', 'an export is already running');
    }
    const token = await takeToken(client, bucketRow(task.project), limits.rateLimit);
    if (!token.taken) throw rateLimited(token.retryAfterSeconds);
    return insertTask(client, { ...task, kind: 'export', total: 0 });
  });
}

/** Gives back the token of an export that failed, was cancelled or expired: it delivered nothing. */
export async function refundExport(db: Queryable, limits: ExportConfig, project: string): Promise<void> {
  await giveBackToken(db, bucketRow(project), limits.rateLimit);
}
