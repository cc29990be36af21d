import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.js';

const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

/**
 * Applies the numbered migrations of sql/ that the current schema has not seen, each in its own
 * transaction, under an advisory lock so that two starting processes do not race. Safe to run twice.
 */
export async function migrate(pool: Pool): Promise<string[]> {
  const files = (await readdir(SQL_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(hashtext('migrate:' || current_schema()))`);
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
      const sql = await readFile(path.join(SQL_DIR, file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      applied.push(file);
    }
    return applied;
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext('migrate:' || current_schema()))`).catch(() => {});
    client.release();
  }
}
