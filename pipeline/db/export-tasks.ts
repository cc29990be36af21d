import type { ExportConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { Pool } from './pool.js';
import { takeToken } from './rate-limits.js';
import { insertTask, type TaskRow } from './tasks.js';

/** The rate limit bucket of export initiations (spec 7). */
export const EXPORT_BUCKET = 'UserExport';

/** Too many export initiations: the caller may try again after `retryAfterSeconds`. */
export class RateLimitedError extends ApiError {
  constructor(readonly retryAfterSeconds: number) {
    super('TooManyRequest', 'RateLimited', 'too many exports requested', { bucket_name: EXPORT_BUCKET });
  }
}

/**
 * Records a new pending export if the project may start one: fewer pending exports than allowed
 * (MaximumConcurrentJobLimitExceeded), then a token of the UserExport bucket (RateLimited). Both
 * checks and the insert are one transaction, serialized, so two requests cannot both slip through;
 * a refused request takes no token.
 */
export async function admitExport(
  pool: Pool,
  limits: ExportConfig,
  task: { id: string; options: Record<string, unknown> },
): Promise<TaskRow> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('export-admission:' || current_schema()))`);
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE kind = 'export' AND status = 'pending'`,
    );
    if ((rows[0]?.n ?? 0) >= limits.maxConcurrent) {
      throw new ApiError(
        'TooManyRequest',
        'MaximumConcurrentJobLimitExceeded',
        'an export is already running',
      );
    }
    const token = await takeToken(client, EXPORT_BUCKET, limits.rateLimit);
    if (!token.taken) throw new RateLimitedError(token.retryAfterSeconds);
    const row = await insertTask(client, {
      id: task.id,
      kind: 'export',
      input: null,
      options: task.options,
      total: 0,
    });
    await client.query('COMMIT');
    return row;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
