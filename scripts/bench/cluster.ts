import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../../pipeline/db/pool.js';
import { dropSchema, freshSchema, requestBodies } from './imports.js';
import { tasksCompletedAt } from './measure.js';
import { type BenchProcess, type BenchService, startBenchService, startProcess } from './processes.js';
import { type BenchRow, row } from './report.js';

/** The bench's topics on the three-broker cluster: as a production cluster makes them. */
const CLUSTER_TOPICS = {
  KAFKA_PARTITIONS: '12',
  KAFKA_REPLICATION_FACTOR: '3',
  KAFKA_MIN_INSYNC_REPLICAS: '2',
};
const SCHEMA = 'bench_cluster';
/** Requests in flight at once: enough that three workers have tasks to share. */
const IN_FLIGHT = 6;
/** How often task progress is sampled while a worker joins. */
const SAMPLE_MS = 50;
const WARM_UP = '{"identifier":"email","records":[{"email":"warm-up@example.com"}]}';
/** How long progress is watched before and after a worker joins. */
const WATCH_MS = 8_000;

/**
 * Imports on the three-broker cluster (replication 3): records/s with three workers beside one
 * worker, and the longest stall of task progress while a worker joins the group (a rebalance)
 * beside the longest stall just before it. On two cores more workers do not import faster: the
 * row reports it as it is.
 */
export async function benchCluster(
  databaseUrl: string,
  clusterBrokers: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const one = await importWith(databaseUrl, clusterBrokers, 1, log);
  const three = await importWith(databaseUrl, clusterBrokers, 3, log);
  const stall = await rebalanceStall(databaseUrl, clusterBrokers, log);
  return [
    row(
      'cluster.import_records_per_s_3_workers',
      three.rate,
      'records/s',
      'one worker on the same cluster',
      one.rate,
      'reported as it is (2 cores)',
    ),
    row(
      'cluster.rebalance_progress_stall_ms',
      stall.during,
      'ms',
      'longest stall just before the join',
      stall.before,
      'a rebalance stalls nothing long',
    ),
  ];
}

/**
 * Runs `use` with a bench service (an API and a worker) on a fresh schema and the cluster, with
 * `workers` worker processes in all, after an untimed import through which the workers' consumer
 * groups form; everything is stopped and the schema dropped after.
 */
async function withClusterService<T>(
  databaseUrl: string,
  brokers: string,
  workers: number,
  use: (pool: Pool, service: BenchService) => Promise<T>,
): Promise<T> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const service = await startBenchService('cluster', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    env: () => CLUSTER_TOPICS,
    connections: IN_FLIGHT,
  });
  const more: BenchProcess[] = [];
  try {
    for (let n = 1; n < workers; n++)
      more.push(await startProcess('pipeline/main.ts', [], service.env, 'Pipeline workers running'));
    await tasksCompletedAt(pool, [await service.importRequest(WARM_UP)]);
    return await use(pool, service);
  } finally {
    for (const w of more) await w.stop();
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

/** Records/s of the import bench's requests, on a fresh schema, with `workers` worker processes. */
async function importWith(
  databaseUrl: string,
  brokers: string,
  workers: number,
  log: (l: string) => void,
): Promise<{ rate: number }> {
  return withClusterService(databaseUrl, brokers, workers, async (pool, service) => {
    const started = Date.now();
    const ids = await sendAll(requestBodies(), (b) => service.importRequest(b));
    const last = await tasksCompletedAt(pool, ids);
    const records = await importedRecords(pool, ids);
    const seconds = (last.getTime() - started) / 1000;
    log(`cluster import, ${workers} worker(s): ${records} records in ${seconds.toFixed(1)} s`);
    return { rate: records / seconds };
  });
}

/**
 * Two workers import while a third joins: the longest time no task moved (no batch committed, no
 * task completed) in the WATCH_MS after the join, and in the WATCH_MS before it.
 */
async function rebalanceStall(
  databaseUrl: string,
  brokers: string,
  log: (l: string) => void,
): Promise<{ before: number; during: number }> {
  return withClusterService(databaseUrl, brokers, 2, async (pool, service) => {
    const sending = sendAll(requestBodies(), (b) => service.importRequest(b));
    // Imports under way in both workers before the watch begins.
    await waitFor(async () => (await progressMark(pool)) > 0);
    const before = await longestStall(pool, WATCH_MS);
    const joining = startProcess('pipeline/main.ts', [], service.env, 'Pipeline workers running');
    const during = await longestStall(pool, WATCH_MS);
    const joined = await joining;
    try {
      await tasksCompletedAt(pool, await sending);
    } finally {
      await joined.stop();
    }
    log(`cluster rebalance: longest stall ${during} ms after a worker joined, ${before} ms before`);
    return { before, during };
  });
}

/** Sends every body, IN_FLIGHT at a time; the task ids. */
async function sendAll(bodies: string[], send: (body: string) => Promise<string>): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < bodies.length) ids.push(await send(bodies[next++] as string));
    }),
  );
  return ids;
}

/** Records applied and tasks completed so far: a number that grows whenever any task moves. */
async function progressMark(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ mark: string }>(
    `SELECT (coalesce(sum(progress_processed), 0) + count(*) FILTER (WHERE status = 'completed'))::text AS mark
       FROM tasks`,
  );
  return Number(rows[0]?.mark ?? 0);
}

/** The longest time (ms) in the next `windowMs` that the progress mark did not grow. */
async function longestStall(pool: Pool, windowMs: number): Promise<number> {
  const end = Date.now() + windowMs;
  let mark = await progressMark(pool);
  let since = Date.now();
  let longest = 0;
  while (Date.now() < end) {
    await sleep(SAMPLE_MS);
    const now = await progressMark(pool);
    if (now !== mark) {
      longest = Math.max(longest, Date.now() - since);
      mark = now;
      since = Date.now();
    }
  }
  return Math.max(longest, Date.now() - since);
}

async function waitFor(done: () => Promise<boolean>): Promise<void> {
  while (!(await done())) await sleep(SAMPLE_MS);
}

/** Records the tasks inserted, checked against what was sent. */
async function importedRecords(pool: Pool, ids: string[]): Promise<number> {
  const { rows } = await pool.query<{ inserted: number; failed: number }>(
    `SELECT sum((summary->>'inserted')::int)::int AS inserted, sum((summary->>'failed')::int)::int AS failed
       FROM tasks WHERE id = ANY($1)`,
    [ids],
  );
  const [counts] = rows;
  if (counts?.failed !== 0) throw new Error(`cluster bench: failed records ${JSON.stringify(counts)}`);
  return counts.inserted;
}
