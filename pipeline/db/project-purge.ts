import { forgetExportTokens } from './export-tokens.js';
import type { Pool } from './pool.js';
import { withTransaction } from './transaction.js';

// `userctl projects delete --purge`: the rows of one project, in every table that holds them, and
// nothing of any other. The only statement set that spans the tables: a purge is the one writer
// that must reach them all, and keeping its list in one place keeps it whole.

/** Users removed per transaction: a large project is purged without one long transaction. */
const USERS_PER_BATCH = 5_000;

/** What a purge removed. */
export interface PurgedRows {
  readonly users: number;
  readonly tasks: number;
}

/**
 * Removes the project's users (their identities, authenticators, claims, roles and groups go with
 * them), its roles and groups, its tasks (their details, parts, queue and outbox rows with them),
 * their blob ledger, its task events and deliveries, its pending user changes and change feed, its disabled
 * endpoints, its last claims and its export bucket (through export-tokens.ts, which names it). The blobs and search rows are the caller's.
 */
export async function purgeProjectRows(pool: Pool, project: string): Promise<PurgedRows> {
  let users = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM users WHERE id IN (SELECT id FROM users WHERE project_id = $1 LIMIT ${USERS_PER_BATCH})`,
      [project],
    );
    users += rowCount ?? 0;
    if ((rowCount ?? 0) < USERS_PER_BATCH) break;
  }
  const tasks = await withTransaction(pool, async (client) => {
    await client.query('DELETE FROM roles WHERE project_id = $1', [project]);
    await client.query('DELETE FROM groups WHERE project_id = $1', [project]);
    await client.query('DELETE FROM user_changes WHERE project_id = $1', [project]);
    await client.query('DELETE FROM user_change_log WHERE project_id = $1', [project]);
    await client.query(
      'DELETE FROM task_blobs WHERE task_id IN (SELECT id FROM tasks WHERE project_id = $1)',
      [project],
    );
    await client.query('DELETE FROM task_events WHERE project_id = $1', [project]);
    await client.query('DELETE FROM webhook_disabled_endpoints WHERE project_id = $1', [project]);
    await client.query('DELETE FROM project_claims WHERE project_id = $1', [project]);
    await forgetExportTokens(client, project);
    const { rowCount } = await client.query('DELETE FROM tasks WHERE project_id = $1', [project]);
    return rowCount ?? 0;
  });
  return { users, tasks };
}
