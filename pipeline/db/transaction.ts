import { sqlState } from '../errors.js';
import type { Pool, PoolClient } from './pool.js';

/** SQLSTATEs of a transaction Postgres rolled back to break a conflict with another one. */
const CONFLICTS = new Set(['40001', '40P01']); // serialization failure, deadlock detected

/** How a transaction is run. */
export interface TransactionOptions {
  /**
   * How many times to run `work` again when Postgres rolled the transaction back to break a
   * deadlock or a serialization failure: the conflict is gone once the other transaction ended.
   */
  readonly conflictRetries?: number;
}

/**
 * Runs `work` in one transaction on a client of its own: committed when it resolves, rolled back
 * when it throws. A client whose connection broke is discarded rather than returned to the pool.
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  { conflictRetries = 0 }: TransactionOptions = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await inTransaction(pool, work);
    } catch (err) {
      if (attempt >= conflictRetries || !CONFLICTS.has(sqlState(err) ?? '')) throw err;
    }
  }
}

async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
