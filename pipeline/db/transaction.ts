import type { Pool, PoolClient } from './pool.js';

/**
 * Runs `work` in one transaction on a client of its own: committed when it resolves, rolled back
 * when it throws. A client whose connection broke is discarded rather than returned to the pool.
 */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
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
