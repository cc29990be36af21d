import { setTimeout as sleep } from 'node:timers/promises';
import { freshSchema } from './imports.js';
import { tasksCompletedAt } from './measure.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';
import { putBenchProjects } from './tenancy.js';

const SCHEMA = 'bench_tenancy_backlog_v1';
/** Project A's backlog: this many imports of this many records each. */
const BACKLOG_IMPORTS = 50;
const BACKLOG_RECORDS = 10_000;
const SMALL_RECORDS = 100;
/** Long enough for every process to read a project put a moment before. */
const REGISTRY_SETTLE_MS = 2_000;

/**
 * `tenancy.small_import_s_under_backlog`: project B's import of 100 records, from its request to
 * its completion, while project A has 500,000 records of imports pending, against the same import
 * on the idle service. An API and a worker on the embedded (Postgres) queue, whose claiming is fair
 * across projects.
 */
export async function benchSmallImportUnderBacklog(
  databaseUrl: string,
  brokers: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const service = await startBenchService('backlog', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    // No Kafka: the embedded queue; and room for the whole backlog.
    env: () => ({
      KAFKA_BROKERS: '',
      IMPORT_PENDING_RECORDS_LIMIT: String(2 * BACKLOG_IMPORTS * BACKLOG_RECORDS),
    }),
  });
  try {
    // The bench's admin keys (ADMIN_JWKS_FILE) and its token's audience.
    await putBenchProjects(pool, [
      { id: 'b', domain: 'b.tenancy.bench', public_origin: `http://localhost:${service.port}` },
    ]);
    await sleep(REGISTRY_SETTLE_MS);
    const small = (tag: string) =>
      JSON.stringify({
        identifier: 'email',
        records: Array.from({ length: SMALL_RECORDS }, (_, i) => ({ email: `${tag}-${i}@b.bench` })),
      });
    const timeSmall = async (tag: string) => {
      const started = Date.now();
      const id = await service.importRequest(small(tag), 'b.tenancy.bench');
      return ((await tasksCompletedAt(pool, [id])).getTime() - started) / 1000;
    };

    const idle = await timeSmall('idle');
    log(`tenancy: project B's ${SMALL_RECORDS}-record import on the idle service: ${idle.toFixed(2)} s`);
    for (let n = 0; n < BACKLOG_IMPORTS; n++) {
      const body = JSON.stringify({
        identifier: 'email',
        records: Array.from({ length: BACKLOG_RECORDS }, (_, i) => ({ email: `a${n}-${i}@a.bench` })),
      });
      await service.importRequest(body);
    }
    const { rows } = await pool.query<{ n: number }>(
      `SELECT coalesce(sum(progress_total - progress_processed), 0)::int AS n FROM tasks
        WHERE project_id = 'default' AND status = 'pending'`,
    );
    const pending = rows[0]?.n ?? 0;
    const underBacklog = await timeSmall('backlog');
    log(`tenancy: the same import with project A's ${pending} records pending: ${underBacklog.toFixed(2)} s`);
    return [
      row(
        'tenancy.small_import_s_under_backlog',
        underBacklog,
        's',
        `the same ${SMALL_RECORDS}-record import of project B on the idle service`,
        idle,
        `under 5 s with another project's ${BACKLOG_IMPORTS * BACKLOG_RECORDS} records pending`,
      ),
    ];
  } finally {
    await service.stop();
    await pool.end();
  }
}
