import { EngineError, sqlState } from '../errors.js';
import type { Pool, PoolClient } from './pool.js';

// The one owner of transactions: nothing else in the service writes BEGIN, COMMIT or SAVEPOINT, nor
// a table that lives as long as a transaction.

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
      return await inTransaction(pool, 'BEGIN', work, 'roll back');
    } catch (err) {
      if (attempt >= conflictRetries || !CONFLICTS.has(sqlState(err) ?? '')) throw err;
    }
  }
}

/** What pg_export_snapshot() returns, and nothing else (SET TRANSACTION SNAPSHOT takes no parameter). */
const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i;

/**
 * Runs `work` in a read-only REPEATABLE READ transaction: every statement sees the database as it
 * was when the first one ran, or, given `snapshot` (what pg_export_snapshot() returned in another
 * transaction that is still open), as that transaction sees it. The transaction lifts the
 * connection's statement and idle-in-transaction timeouts: an export's COPY is long by design, and
 * a coordinator waits in it for its parts; the export's own time limit bounds it. A snapshot whose
 * work failed is not rolled back but its connection closed: a COPY cut short leaves the connection
 * in no state to take another statement, and there is nothing to undo.
 */
export async function withSnapshot<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  { snapshot }: { readonly snapshot?: string } = {},
): Promise<T> {
  if (snapshot !== undefined && !SNAPSHOT_ID.test(snapshot))
    throw new EngineError('SnapshotIdInvalid', `not a snapshot id: ${snapshot}`);
  return inTransaction(
    pool,
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    async (client) => {
      if (snapshot !== undefined) await client.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
      await client.query(
        `SELECT set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)`,
      );
      return work(client);
    },
    'close',
  );
}

/** Savepoints of this process, numbered so that nested ones never share a name. */
let savepoints = 0;

/**
 * Runs `work` inside a savepoint of the transaction open on `client`: when it throws, what it
 * wrote is rolled back and the transaction goes on. With `keep: false` it is rolled back even when
 * it resolves (a dry run).
 */
export async function withSavepoint<T>(
  client: PoolClient,
  work: () => Promise<T>,
  { keep = true }: { readonly keep?: boolean } = {},
): Promise<T> {
  const name = `savepoint_${++savepoints}`;
  await client.query(`SAVEPOINT ${name}`);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
    throw err;
  }
  await client.query(keep ? `RELEASE SAVEPOINT ${name}` : `ROLLBACK TO SAVEPOINT ${name}`);
  return result;
}

async function inTransaction<T>(
  pool: Pool,
  begin: string,
  work: (client: PoolClient) => Promise<T>,
  onFailure: 'roll back' | 'close',
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (onFailure === 'close') broken = err instanceof Error ? err : new Error(String(err));
    else
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * The statement that readies a scratch table of the caller's transaction, in one round trip: a
 * temporary table its connection keeps, emptied when the transaction ends (a truncate, which leaves
 * no dead rows), and emptied now too (the batches of a dry run share one transaction).
 */
export function scratchTableSql(name: string, columns: string): string {
  return `CREATE TEMP TABLE IF NOT EXISTS ${name} (${columns}) ON COMMIT DELETE ROWS; DELETE FROM ${name}`;
}
