import type { ExportConfig } from '../config.js';
import type { Queryable } from './pool.js';
import { dropBucket, giveBackToken, type TakeResult, takeToken } from './rate-limits.js';

/** The rate limit bucket of export initiations (decisions 7). */
export const EXPORT_BUCKET = 'UserExport';

/** The row of a project's UserExport bucket: every project has its own. */
function bucketRow(project: string): string {
  return `${project}/${EXPORT_BUCKET}`;
}

/** Takes a token of the project's UserExport bucket: whether it was taken, else when to try again. */
export function takeExportToken(db: Queryable, limits: ExportConfig, project: string): Promise<TakeResult> {
  return takeToken(db, bucketRow(project), limits.rateLimit);
}

/** Gives back the token of an export that failed, was cancelled or expired: it delivered nothing. */
export async function refundExport(db: Queryable, limits: ExportConfig, project: string): Promise<void> {
  await giveBackToken(db, bucketRow(project), limits.rateLimit);
}

/** Forgets the project's bucket (a purged project's). */
export async function forgetExportTokens(db: Queryable, project: string): Promise<void> {
  await dropBucket(db, bucketRow(project));
}
