import type { Pool } from '../db/pool.js';
import type { TaskAttempt } from '../db/tasks/leases.js';
import { holdDryRun } from '../db/tasks/progress.js';
import { withSavepoint, withTransaction } from '../db/transaction.js';
import { type ApplyTarget, saveDetails } from './apply-batch.js';
import type { ImportDetail } from './import-batch.js';

/** What a record of a dry run would have become. */
const WOULD: Partial<Record<ImportDetail['outcome'], ImportDetail['outcome']>> = {
  inserted: 'would_insert',
  updated: 'would_update',
  skipped: 'would_skip',
};

/**
 * A dry run (`dry_run: true`): `run` applies the request exactly as a real run would, batch by
 * batch, each batch in a savepoint of one transaction, so that a later batch sees what an earlier
 * one did and a record the database refuses fails alone; then every write is rolled back and only
 * the details are stored, with the outcomes `would_insert`, `would_update`, `would_skip` and
 * `failed`. Nothing is kept of a dry run a worker dies in: the task runs again from the start.
 * A second delivery of the task waits for the first (holdDryRun), then does nothing. The users a
 * dry run reads are not locked: it only reads them; what it writes stays locked until it ends.
 */
export async function dryRun(
  pool: Pool,
  attempt: TaskAttempt,
  leaseMs: number,
  run: (target: ApplyTarget) => Promise<void>,
): Promise<void> {
  await withTransaction(pool, async (client) => {
    const details: ImportDetail[] = [];
    let processed = 0;
    // An attempt that stored the details already (and died before completing the task), or one
    // running at the same time (the bus delivers at least once): the first one's details stand.
    if ((await holdDryRun(client, attempt)) > 0) return;
    // One transaction for the whole request, long by design: bounded by the request's size.
    await client.query(`SELECT set_config('statement_timeout', '0', true)`);
    await withSavepoint(
      client,
      () =>
        run({
          atomic: (work) => withSavepoint(client, () => work(client)),
          done: async () => processed,
          keep: async (_client, kept, after) => {
            details.push(...kept.map((d) => ({ ...d, outcome: WOULD[d.outcome] ?? d.outcome })));
            processed = after;
          },
          applied: () => {}, // nothing is applied: the records metric is not moved
        }),
      { keep: false },
    );
    await saveDetails(client, attempt, details, processed, leaseMs);
  });
}
