import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, projectFromDocument } from '../../pipeline/config.js';
import { migrate } from '../../pipeline/db/migrate.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { putProjects } from '../../pipeline/projects/project-admin.js';
import { secretBox } from '../../pipeline/tasks/task-secrets.js';
import { emptySchema } from './imports.js';
import { BENCH_SECRETS_KEY, type BenchService, startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_tenancy_v1';
const PROJECTS = 1_000;
/** How long idle work is counted, once the processes have settled. */
const WINDOW_MS = 20_000;
const SETTLE_MS = 5_000;

/**
 * `tenancy.idle_transactions_per_s`: the transactions an idle API and worker commit a second with
 * 1,000 projects registered, against the same processes with one. Nothing runs per project, so
 * the two match: the registry is one small statement a second whatever its size.
 */
export async function benchTenancy(
  databaseUrl: string,
  brokers: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const pool = await emptySchema(databaseUrl, SCHEMA);
  await migrate(pool);
  const service = await startBenchService('tenancy', { databaseUrl, schema: SCHEMA, brokers });
  try {
    const one = await idleTransactionsPerSecond(pool);
    log(`tenancy: idle with 1 project: ${one.toFixed(1)} transactions/s`);
    await putBenchProjects(
      pool,
      Array.from({ length: PROJECTS - 1 }, (_, i) => ({
        id: `p${i}`,
        domain: `p${i}.tenancy.bench`,
        custom_attributes: [{ name: 'tier', type: 'string' }],
      })),
    );
    const many = await idleTransactionsPerSecond(pool);
    log(`tenancy: idle with ${PROJECTS} projects: ${many.toFixed(1)} transactions/s`);
    return [
      row(
        'tenancy.idle_transactions_per_s',
        many,
        'transactions/s',
        'the same idle API and worker with 1 project',
        one,
        'ratio <= 1.1',
      ),
    ];
  } finally {
    await service.stop();
    await pool.end();
  }
}

/** Long enough for every process to read projects put a moment before. */
const REGISTRY_SETTLE_MS = 2_000;

/**
 * Puts projects a bench service serves with its admin keys (the deployment's) and its token (their
 * public origin is the token's audience), once every process has read them.
 */
export async function putServedProjects(
  pool: Pool,
  service: BenchService,
  documents: readonly { id: string; domain: string }[],
): Promise<void> {
  await putBenchProjects(
    pool,
    documents.map((document) => ({ ...document, public_origin: `http://localhost:${service.port}` })),
  );
  await sleep(REGISTRY_SETTLE_MS);
}

/** Puts projects of these files as `userctl projects put` does, sealed with the bench services' key. */
export async function putBenchProjects(
  pool: Pool,
  documents: readonly Record<string, unknown>[],
): Promise<void> {
  const config = loadConfig({});
  await putProjects(
    {
      pool,
      box: secretBox(Buffer.from(BENCH_SECRETS_KEY, 'base64')),
      read: (document, name) => projectFromDocument(document, name, config),
      embedded: true,
    },
    documents.map((document, i) => ({ name: `project ${i + 1}`, document })),
  );
}

/** The database's committed and rolled back transactions a second over the window, once settled. */
async function idleTransactionsPerSecond(pool: Pool): Promise<number> {
  await sleep(SETTLE_MS);
  const read = async () => {
    const client = await pool.connect();
    try {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>(
        `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()`,
      );
      return Number(rows[0]?.n ?? 0);
    } finally {
      client.release();
    }
  };
  const before = await read();
  const started = Date.now();
  await sleep(WINDOW_MS);
  // Statistics reach the view within a second of a transaction's end.
  await sleep(1_000);
  const after = await read();
  return (after - before) / ((Date.now() - started) / 1000);
}
