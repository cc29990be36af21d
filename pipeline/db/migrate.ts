import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.js';
import { withTransaction } from './transaction.js';

const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

/**
 * Applies the numbered migrations of sql/ that the current schema has not seen, all in one
 * transaction under a transaction-level advisory lock: two processes never apply them at once, and
 * the lock holds through a transaction-pooling PgBouncer, which a session lock does not. A failed
 * migration leaves the schema as it was. Safe to run twice. `projectId` is the configured project,
 * which the rows of a deployment from before the projects were rows are given.
 */
export async function migrate(pool: Pool, projectId = 'default'): Promise<string[]> {
  const files = (await readdir(SQL_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  return withTransaction(pool, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('migrate:' || current_schema()))`);
    // A migration may rewrite a large table: it is bounded by the deploy, not by a statement timeout.
    await client.query(`SELECT set_config('statement_timeout', '0', true)`);
    // The project the rows of a deployment from before belong to (sql/024_user_projects.sql).
    await client.query(`SELECT set_config('users_service.project_id', $1, true)`, [projectId]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map(
        (r) => r.version,
      ),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await client.query(await readFile(path.join(SQL_DIR, file), 'utf8'));
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
  });
}
