import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool, type Pool } from '../../pipeline/db/pool.js';
import { BENCH_PROJECT, batched } from './bench-schema.js';
import { checkpoint, rounds, tasksCompletedAt } from './measure.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

export const RECORDS = 100_000;
const REQUEST_BYTES = 480_000;
const IN_FLIGHT = 4;
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const ROLES = ['bench_reader', 'bench_writer'];
const WARM_UP_RECORD = { email: 'warm-up@example.com' };

/** Record i of the bench: bcrypt hash, email and username login ids, two roles, a custom attribute. */
export function record(i: number): Record<string, unknown> {
  return {
    email: `import${i}@example.com`,
    preferred_username: `import${i}`,
    password: { type: 'bcrypt', password_hash: HASH },
    roles: ROLES,
    custom_attributes: { member_id: `M-${i}` },
  };
}

/** Splits the records into import request bodies of about REQUEST_BYTES each. */
export function requestBodies(): string[] {
  const bodies: string[] = [];
  let chunk: string[] = [];
  let size = 0;
  for (let i = 0; i < RECORDS; i++) {
    const json = JSON.stringify(record(i));
    if (size + json.length > REQUEST_BYTES) {
      bodies.push(`{"identifier":"email","records":[${chunk.join(',')}]}`);
      chunk = [];
      size = 0;
    }
    chunk.push(json);
    size += json.length + 1;
  }
  bodies.push(`{"identifier":"email","records":[${chunk.join(',')}]}`);
  return bodies;
}

/** A new, empty schema of the bench database (dropped first if it was there), and a pool on it. */
export async function emptySchema(url: string, schema: string): Promise<Pool> {
  await dropSchema(url, schema);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return createPool({ connectionString: url, schema, max: 4 });
}

/** A new, migrated schema of the bench database with the bench's roles. */
export async function freshSchema(url: string, schema: string): Promise<Pool> {
  const pool = await emptySchema(url, schema);
  await migrate(pool);
  for (const key of ROLES)
    await pool.query('INSERT INTO roles (id, project_id, key) VALUES ($1, $2, $3)', [
      randomUUID(),
      BENCH_PROJECT,
      key,
    ]);
  return pool;
}

/**
 * Drops a bench schema with its tables. A side is dropped as soon as it is measured: tables just
 * filled are what autovacuum takes next, and its vacuum and analyze of 100k fresh rows (seconds of
 * a core) would otherwise run during the other side's measurement.
 */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
}

/** The same rows as the import writes (`count` records), loaded with COPY into the same indexed tables. */
export async function rawCopy(pool: Pool, count = RECORDS): Promise<number> {
  const roleIds = (await pool.query<{ id: string }>('SELECT id FROM roles ORDER BY key')).rows.map(
    (r) => r.id,
  );
  const users: string[] = [];
  const identities: string[] = [];
  const authenticators: string[] = [];
  const links: string[] = [];
  const N = '\\N';
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const email = `import${i}@example.com`;
    const username = `import${i}`;
    users.push(
      `${id}\t${JSON.stringify({ email, preferred_username: username })}\t${JSON.stringify({ member_id: `M-${i}` })}\n`,
    );
    identities.push(`${randomUUID()}\t${id}\tlogin_id\temail\temail\t${email}\t${email}\t${email}\t${N}\n`);
    identities.push(
      `${randomUUID()}\t${id}\tlogin_id\tusername\tusername\t${username}\t${username}\t${N}\t${username}\n`,
    );
    authenticators.push(`${randomUUID()}\t${id}\tprimary\tpassword\t${HASH.replaceAll('\\', '\\\\')}\n`);
    for (const role of roleIds) links.push(`${id}\t${role}\n`);
  }
  // Only the loading is timed: the rows are made beforehand.
  await checkpoint(pool);
  const client = await pool.connect();
  const started = process.hrtime.bigint();
  try {
    await client.query('BEGIN');
    const copy = async (target: string, rows: string[]) =>
      pipeline(Readable.from(batched(rows)), client.query(copyFrom(`COPY ${target} FROM STDIN`)));
    await copy('users (id, standard_attributes, custom_attributes)', users);
    await copy(
      'identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id, email, preferred_username)',
      identities,
    );
    await copy('authenticators (id, user_id, kind, type, password_hash)', authenticators);
    await copy('user_roles (user_id, role_id)', links);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * 100,000 records through HTTP -> Kafka -> worker -> Postgres, beside raw COPY of the same rows:
 * each round loads both into fresh schemas, and each side's best round is kept (measure.ts).
 */
export async function benchImport(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const receiver = await hangingReceiver();
  const measured = await rounds(async () => {
    const copyPool = await freshSchema(databaseUrl, 'bench_import_copy');
    const copyRate = await rawCopy(copyPool).finally(() => copyPool.end());
    await dropSchema(databaseUrl, 'bench_import_copy');
    log(`raw COPY: ${Math.round(copyRate)} records/s`);
    const importRate = await importRateOf(databaseUrl, brokers, {}, log);
    // The production shape: every task also writes its results file; then, besides, tells an
    // endpoint that takes each request and never answers, holding every delivery slot until its
    // timeout.
    const blobStorage = {
      AZURE_STORAGE_CONNECTION_STRING: blobs,
      AZURE_STORAGE_CONTAINER: `bench-results-${Date.now()}`,
    };
    const withResults = await importRateOf(databaseUrl, brokers, blobStorage, log);
    const hanging = [
      {
        id: 'hanging',
        url: receiver.url,
        secret: 'a-bench-signing-secret',
        events: ['user_import.completed'],
      },
    ];
    // The bench's receiver listens on this machine: the network policy's allow-list lets it in.
    const withWebhook = await importRateOf(
      databaseUrl,
      brokers,
      { ...blobStorage, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', webhooks: hanging },
      log,
    );
    return { copyRate, importRate, withResults, withWebhook };
  }).finally(() => receiver.close());
  const best = (side: (m: (typeof measured)[number]) => number) => Math.max(...measured.map(side));
  const ratio = (m: (typeof measured)[number]) => m.importRate / m.copyRate;
  const worst = measured.reduce((a, b) => (ratio(b) < ratio(a) ? b : a));
  return [
    row(
      'import.records_per_s_results_file',
      best((m) => m.withResults),
      'records/s',
      'the same import without results files',
      best((m) => m.importRate),
      "the results file's cost",
    ),
    row(
      'import.records_per_s_hanging_webhook',
      best((m) => m.withWebhook),
      'records/s',
      'the same import with results files, without a webhook',
      best((m) => m.withResults),
      '~1: a hanging receiver holds no task',
    ),
    // The goal holds in every round: the row is the round that came nearest to missing it.
    row(
      'import.records_per_s',
      worst.importRate,
      'records/s',
      'raw COPY of the same rows, in the same round',
      worst.copyRate,
      '>= 0.9 of COPY in every round (the worst shown)',
    ),
  ];
}

/** What a measured import's service has besides the bench's: blob storage, webhook endpoints. */
interface ImportSetting {
  readonly AZURE_STORAGE_CONNECTION_STRING?: string;
  readonly AZURE_STORAGE_CONTAINER?: string;
  readonly WEBHOOK_ALLOWED_HOSTS?: string;
  readonly webhooks?: readonly Record<string, unknown>[];
}

/** Records/s of one import of the bench's records by a fresh service, into a fresh schema. */
async function importRateOf(
  databaseUrl: string,
  brokers: string,
  { webhooks = [], ...env }: ImportSetting,
  log: (l: string) => void,
): Promise<number> {
  const pool = await freshSchema(databaseUrl, 'bench_import');
  const projectFile = path.resolve('.bench/import-project.json');
  mkdirSync('.bench', { recursive: true });
  writeFileSync(
    projectFile,
    JSON.stringify({ custom_attributes: [{ name: 'member_id', type: 'string' }], webhooks }),
  );
  const service = await startBenchService('import', {
    databaseUrl,
    schema: 'bench_import',
    brokers,
    env: () => ({ PROJECT_CONFIG: projectFile, ...env }),
    connections: IN_FLIGHT,
  });
  const bodies = requestBodies();
  try {
    const send = (body: string) => service.importRequest(body);
    const completed = (ids: string[]) => tasksCompletedAt(pool, ids);
    // One small import first, untimed: on a freshly started broker the worker's first consumer
    // group join waits for Kafka to create its offsets topic, seconds that a running service
    // never pays again.
    await completed([await send(`{"identifier":"email","records":[${JSON.stringify(WARM_UP_RECORD)}]}`)]);
    await checkpoint(pool);
    const started = Date.now();
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < bodies.length) ids.push(await send(bodies[next++] as string));
      }),
    );
    const seconds = ((await completed(ids)).getTime() - started) / 1000;
    const { rows } = await pool.query<{ inserted: number; users: number }>(
      `SELECT (SELECT sum((summary->>'inserted')::int) FROM tasks WHERE id = ANY($1))::int AS inserted,
              (SELECT count(*) FROM users)::int AS users`,
      [ids],
    );
    if (rows[0]?.inserted !== RECORDS || rows[0]?.users !== RECORDS + 1) {
      throw new Error(
        `import bench: expected ${RECORDS} inserted (and the warm-up user), got ${JSON.stringify(rows[0])}`,
      );
    }
    const results = env.AZURE_STORAGE_CONNECTION_STRING ? ' with results files' : '';
    const told = webhooks.length > 0 ? ' and a hanging webhook' : '';
    log(`import${results}${told}: ${bodies.length} requests, ${seconds.toFixed(1)} s`);
    return RECORDS / seconds;
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, 'bench_import');
  }
}

/** An HTTP endpoint that takes each request and never answers: the slowest receiver there is. */
async function hangingReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
