import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Pool, PoolClient } from './pool.js';
import { withTransaction } from './transaction.js';

const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

/** The first line of a migration whose statements run one by one, outside a transaction. */
const ONLINE = /^-- online:/;

/**
 * Applies the numbered migrations of sql/ that the current schema has not seen, in order. The
 * ones in a row that are not online run in one transaction under a transaction-level advisory
 * lock: two processes never apply them at once, the lock holds through a transaction-pooling
 * PgBouncer (which a session lock does not), and a failed one leaves the schema as it was. An
 * online migration (its first line `-- online:`) builds what would lock a large table for long
 * (CREATE INDEX CONCURRENTLY): its statements run one by one under a session-level lock (a direct
 * connection), each recorded once done, so a run cut short goes on from where it stopped. A
 * process that finds the lock held asks again a moment later, never waiting inside a statement. Safe to
 * run twice. `projectId` is the configured project, which the rows of a deployment from before the
 * projects were rows are given; `through` (a number, `023`) stops at that migration, as a
 * deployment of an earlier version has its schema (the bench of the live migration).
 */
export async function migrate(
  pool: Pool,
  projectId = 'default',
  { through }: { readonly through?: string } = {},
): Promise<string[]> {
  const files = (await readdir(SQL_DIR))
    .filter((f) => /^\d{3}_.+\.sql$/.test(f) && (through === undefined || f.slice(0, 3) <= through))
    .sort();
  const texts = new Map(
    await Promise.all(files.map(async (f) => [f, await readFile(path.join(SQL_DIR, f), 'utf8')] as const)),
  );
  const applied: string[] = [];
  for (;;) {
    const step = await applyInTransaction(pool, projectId, files, texts);
    if (step === 'busy') {
      await sleep(LOCK_RETRY_MS);
      continue;
    }
    applied.push(...step.done);
    if (!step.online) return applied;
    const online = await applyOnline(pool, step.online, texts.get(step.online) as string);
    if (online === 'busy') await sleep(LOCK_RETRY_MS);
    else if (online === 'applied') applied.push(step.online);
  }
}

/**
 * How long a process waits before it asks again for the lock another process holds. It never
 * waits inside a statement: a waiting statement holds a snapshot, and CREATE INDEX CONCURRENTLY
 * in the process that holds the lock would wait for that snapshot in turn.
 */
const LOCK_RETRY_MS = 250;
const LOCK = `hashtext('migrate:' || current_schema())`;

/**
 * Applies, in one transaction, the migrations not yet applied up to the first online one, which
 * it names for the caller; 'busy' when another process holds the lock.
 */
function applyInTransaction(
  pool: Pool,
  projectId: string,
  files: readonly string[],
  texts: ReadonlyMap<string, string>,
): Promise<{ done: string[]; online: string | undefined } | 'busy'> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ held: boolean }>(
      `SELECT pg_try_advisory_xact_lock(${LOCK}) AS held`,
    );
    if (!rows[0]?.held) return 'busy';
    // A migration may rewrite a large table: it is bounded by the deploy, not by a statement timeout.
    await client.query(`SELECT set_config('statement_timeout', '0', true)`);
    // The project the rows of a deployment from before belong to (sql/024_user_projects.sql).
    await client.query(`SELECT set_config('users_service.project_id', $1, true)`, [projectId]);
    await createLedger(client);
    const seen = await appliedVersions(client);
    const done: string[] = [];
    for (const file of files) {
      if (seen.has(file)) continue;
      const text = texts.get(file) as string;
      if (ONLINE.test(text)) return { done, online: file };
      await client.query(text);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      done.push(file);
    }
    return { done, online: undefined };
  });
}

/**
 * Runs an online migration's statements not yet recorded, one by one: 'applied', 'done' (another
 * process had applied it) or 'busy' (another process holds the lock). An index that a statement
 * cut short left invalid is dropped and built again.
 */
async function applyOnline(pool: Pool, file: string, text: string): Promise<'applied' | 'done' | 'busy'> {
  return underSessionLock(pool, async (client): Promise<'applied' | 'done'> => {
    const seen = await appliedVersions(client);
    if (seen.has(file)) return 'done';
    const statements = onlineStatements(text);
    for (const [n, statement] of statements.entries()) {
      const step = `${file}#${n + 1}`;
      if (seen.has(step)) continue;
      const index = /CREATE (?:UNIQUE )?INDEX CONCURRENTLY IF NOT EXISTS (\w+)/.exec(statement)?.[1];
      if (index) await dropInvalidIndex(client, index);
      await client.query(statement);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [step]);
    }
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
    return 'applied';
  });
}

/**
 * Runs `work` on a connection of its own that holds the migrations' session-level lock, its
 * statements without a time limit (an index built concurrently takes as long as it takes); 'busy'
 * when another process holds the lock.
 */
async function underSessionLock<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T | 'busy'> {
  const client = await pool.connect();
  let held = false;
  try {
    const { rows } = await client.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(${LOCK}) AS held`);
    held = rows[0]?.held ?? false;
    if (!held) return 'busy';
    await client.query('SET statement_timeout = 0');
    return await work(client);
  } finally {
    if (held) {
      await client.query(`SELECT pg_advisory_unlock(${LOCK})`).catch(() => {});
      await client.query('RESET statement_timeout').catch(() => {});
    }
    client.release();
  }
}

/** The statements of an online migration: its text split at each `;` that ends a line, comments out. */
function onlineStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0);
}

/** Where users(searchKeyword) is served: ClickHouse when configured, else Postgres. */
export type SearchServedBy = 'clickhouse' | 'postgres';

/**
 * Keeps the Postgres trigram index of users(searchKeyword) (sql/009) only where Postgres serves the
 * search: with ClickHouse configured it is dropped (it is most of an imported user's WAL and none
 * of its reads), and built again when the deployment goes back to Postgres. Both concurrently,
 * under the migrations' lock: writes go on meanwhile. 'busy' when another process holds the lock
 * (it aligns the index itself, or the next start does).
 */
export async function alignSearchTextIndex(pool: Pool, servedBy: SearchServedBy): Promise<'done' | 'busy'> {
  return underSessionLock(pool, async (client): Promise<'done'> => {
    if (servedBy === 'clickhouse') {
      await client.query('DROP INDEX CONCURRENTLY IF EXISTS users_search_text');
      return 'done';
    }
    await dropInvalidIndex(client, 'users_search_text');
    const trgm = await client.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'`,
    );
    const schema = client.escapeIdentifier(trgm.rows[0]?.schema ?? 'public');
    await client.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS users_search_text
         ON users USING gin (user_search_text(standard_attributes, id) ${schema}.gin_trgm_ops)`,
    );
    return 'done';
  });
}

async function dropInvalidIndex(client: PoolClient, name: string): Promise<void> {
  const { rows } = await client.query<{ invalid: boolean }>(
    `SELECT NOT i.indisvalid AS invalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [name],
  );
  if (rows[0]?.invalid) await client.query(`DROP INDEX CONCURRENTLY ${name}`);
}

async function createLedger(client: PoolClient): Promise<void> {
  await client.query(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
}

async function appliedVersions(client: PoolClient): Promise<Set<string>> {
  const { rows } = await client.query<{ version: string }>('SELECT version FROM schema_migrations');
  return new Set(rows.map((r) => r.version));
}
