import { dropSchema, freshSchema } from './imports.js';
import { tasksCompletedAt } from './measure.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';
import { putServedProjects } from './tenancy.js';

const SCHEMA = 'bench_tenancy_backlog_v1';
/** Project A's backlog: this many imports of this many records each. */
const BACKLOG_IMPORTS = 50;
const BACKLOG_RECORDS = 10_000;
const SMALL_RECORDS = 100;

/**
 * `tenancy.small_import_s_under_backlog` (the embedded Postgres queue) and
 * `tenancy.small_import_s_under_backlog_kafka`: project B's import of 100 records, from its request
 * to its completion, while project A has 500,000 records of imports pending, against the same
 * import on the idle service; an API and a worker on each bus, whose claiming is fair across
 * projects.
 */
export async function benchSmallImportUnderBacklog(
  databaseUrl: string,
  brokers: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  return [
    await smallImportUnderBacklog(databaseUrl, '', 'tenancy.small_import_s_under_backlog', log),
    await smallImportUnderBacklog(databaseUrl, brokers, 'tenancy.small_import_s_under_backlog_kafka', log),
  ];
}

/** The row `name`, on Kafka at `brokers` or (with none) on the embedded queue. */
async function smallImportUnderBacklog(
  databaseUrl: string,
  brokers: string,
  name: string,
  log: (line: string) => void,
): Promise<BenchRow> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const service = await startBenchService('backlog', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    // Room for the whole backlog.
    env: () => ({
      KAFKA_BROKERS: brokers,
      IMPORT_PENDING_RECORDS_LIMIT: String(2 * BACKLOG_IMPORTS * BACKLOG_RECORDS),
    }),
  });
  const bus = brokers === '' ? 'the embedded queue' : 'Kafka';
  try {
    await putServedProjects(pool, service, [{ id: 'b', domain: 'b.tenancy.bench' }]);
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
    log(
      `tenancy (${bus}): project B's ${SMALL_RECORDS}-record import on the idle service: ${idle.toFixed(2)} s`,
    );
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
    log(
      `tenancy (${bus}): the same import with project A's ${pending} records pending: ${underBacklog.toFixed(2)} s`,
    );
    return row(
      name,
      underBacklog,
      's',
      `the same ${SMALL_RECORDS}-record import of project B on the idle service`,
      idle,
      `under 5 s with another project's ${BACKLOG_IMPORTS * BACKLOG_RECORDS} records pending`,
    );
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}
