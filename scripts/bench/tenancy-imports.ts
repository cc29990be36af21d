import { migrate } from '../../pipeline/db/migrate.js';
import { emptySchema } from './imports.js';
import { tasksCompletedAt } from './measure.js';
import { type BenchService, startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';
import { putServedProjects } from './tenancy.js';

const SCHEMA = 'bench_tenancy_imports_v1';
const PROJECTS = 100;
const RECORDS_PER_PROJECT = 1_000;
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

/**
 * `tenancy.import_records_per_s_100_projects`: 100 projects importing 1,000 records each at once
 * (one request each, over Kafka), against one project importing the same 100 requests: records/s
 * from the first request to the last task's completion. One project's settings, read per task,
 * cost nothing a hundred can add to.
 */
export async function benchImportsOfManyProjects(
  databaseUrl: string,
  brokers: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const pool = await emptySchema(databaseUrl, SCHEMA);
  await migrate(pool);
  const service = await startBenchService('projects', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    connections: 8,
  });
  try {
    await putServedProjects(
      pool,
      service,
      Array.from({ length: PROJECTS }, (_, p) => ({ id: `p${p}`, domain: `p${p}.imports.bench` })),
    );
    const one = await recordsPerSecond(service, pool, () => undefined, 'one');
    log(`tenancy: ${PROJECTS} requests of one project: ${one.toFixed(0)} records/s`);
    const many = await recordsPerSecond(service, pool, (p) => `p${p}.imports.bench`, 'many');
    log(`tenancy: one request of each of ${PROJECTS} projects at once: ${many.toFixed(0)} records/s`);
    return [
      row(
        'tenancy.import_records_per_s_100_projects',
        many,
        'records/s',
        `the same ${PROJECTS} requests of one project`,
        one,
        'ratio >= 0.9',
      ),
    ];
  } finally {
    await service.stop();
    await pool.end();
  }
}

/** Records/s of PROJECTS requests sent at once, request `p` to the project of `hostOf(p)`. */
async function recordsPerSecond(
  service: BenchService,
  pool: Awaited<ReturnType<typeof emptySchema>>,
  hostOf: (p: number) => string | undefined,
  tag: string,
): Promise<number> {
  const bodies = Array.from({ length: PROJECTS }, (_, p) =>
    JSON.stringify({
      identifier: 'email',
      records: Array.from({ length: RECORDS_PER_PROJECT }, (_, i) => ({
        email: `${tag}-${p}-${i}@imports.bench`,
        password: { type: 'bcrypt', password_hash: HASH },
      })),
    }),
  );
  const started = Date.now();
  const ids = await Promise.all(bodies.map((body, p) => service.importRequest(body, hostOf(p))));
  const completed = await tasksCompletedAt(pool, ids);
  return (PROJECTS * RECORDS_PER_PROJECT) / ((completed.getTime() - started) / 1000);
}
