import type { Pool, Queryable } from './pool.js';
import { withTransaction } from './transaction.js';

// The deployment's export readers (sql/038_export_readers.sql): coordinators holding a reader, and
// the parts of split exports being written (export-parts.ts), counted together against one cap.
// Both tables are counted across every project on purpose: the cap guards the database they share.

/** The one lock around taking a reader, so that two at once never both take the last one. */
export const READERS_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('export_readers'))";

/** How many readers hold a live lease now: coordinators', and parts being written. */
export const LIVE_READERS_SQL = `(
  (SELECT count(*) FROM export_readers WHERE lease_until >= clock_timestamp())
  + (SELECT count(*) FROM export_parts
      WHERE lease_until >= clock_timestamp() AND block_ids IS NULL AND failure IS NULL))`;

/** A coordinator's hold on a reader: its task, and who holds it. */
export interface ReaderHold {
  readonly taskId: string;
  readonly holder: string;
}

/**
 * Takes a reader for the task's coordinator until the lease ends, unless `readersMax` readers of
 * the deployment are live; false then. A reader the task held before (an earlier attempt) is
 * given up first.
 */
export async function takeReader(
  pool: Pool,
  hold: ReaderHold & { readonly leaseMs: number; readonly readersMax: number },
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    await tx.query(READERS_LOCK_SQL);
    await tx.query('DELETE FROM export_readers WHERE task_id = $1', [hold.taskId]);
    const { rowCount } = await tx.query(
      `INSERT INTO export_readers (task_id, holder, lease_until)
       SELECT $1, $2, clock_timestamp() + $3 * interval '1 millisecond' WHERE ${LIVE_READERS_SQL} < $4`,
      [hold.taskId, hold.holder, hold.leaseMs, hold.readersMax],
    );
    return rowCount === 1;
  });
}

/** Renews a held reader's lease. */
export async function renewReader(db: Queryable, hold: ReaderHold, leaseMs: number): Promise<void> {
  await db.query(
    `UPDATE export_readers SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE task_id = $1 AND holder = $2`,
    [hold.taskId, hold.holder, leaseMs],
  );
}

/** Gives a held reader back. */
export async function releaseReader(db: Queryable, hold: ReaderHold): Promise<void> {
  await db.query('DELETE FROM export_readers WHERE task_id = $1 AND holder = $2', [hold.taskId, hold.holder]);
}
