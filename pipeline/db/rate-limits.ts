import type { Queryable } from './pool.js';

/** A token bucket: `count` tokens, refilled evenly over `periodSeconds`. */
export interface BucketLimit {
  readonly count: number;
  readonly periodSeconds: number;
}

/** Whether a token was taken, and if not, in how many seconds one will be there. */
export type TakeResult =
  | { readonly taken: true }
  | { readonly taken: false; readonly retryAfterSeconds: number };

/**
 * Takes one token from the named bucket, atomically (a bucket starts full). Refused when less
 * than one token is left, and then nothing is taken.
 */
export async function takeToken(db: Queryable, name: string, limit: BucketLimit): Promise<TakeResult> {
  const rate = limit.count / limit.periodSeconds; // tokens per second
  const refilled = `least($2::float8, b.tokens + extract(epoch FROM clock_timestamp() - b.updated_at) * $3::float8)`;
  const { rows } = await db.query<{ available: number; taken: boolean }>(
    `WITH taken AS (
       INSERT INTO rate_limit_buckets AS b (name, tokens, updated_at)
       VALUES ($1, $2::float8 - 1, clock_timestamp())
       ON CONFLICT (name) DO UPDATE SET tokens = ${refilled} - 1, updated_at = clock_timestamp()
        WHERE ${refilled} >= 1
       RETURNING tokens)
     SELECT true AS taken, 0::float8 AS available FROM taken
     UNION ALL
     SELECT false, ${refilled} FROM rate_limit_buckets b WHERE b.name = $1 AND NOT EXISTS (SELECT 1 FROM taken)`,
    [name, limit.count, rate],
  );
  const row = rows[0];
  if (!row || row.taken) return { taken: true };
  return { taken: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - row.available) / rate)) };
}

/**
 * Gives one token back to the named bucket (never above its `count`): the work it paid for failed.
 * Never takes any away: a worker gives back with the deployment's count, and a project's own
 * count may be higher.
 */
export async function giveBackToken(db: Queryable, name: string, limit: BucketLimit): Promise<void> {
  await db.query(
    'UPDATE rate_limit_buckets SET tokens = greatest(tokens, least($2::float8, tokens + 1)) WHERE name = $1',
    [name, limit.count],
  );
}

/** Removes the named bucket. */
export async function dropBucket(db: Queryable, name: string): Promise<void> {
  await db.query('DELETE FROM rate_limit_buckets WHERE name = $1', [name]);
}
