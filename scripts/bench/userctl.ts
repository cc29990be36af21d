import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from 'selfsigned';
import type { Pool } from '../../pipeline/db/pool.js';
import { dropSchema, freshSchema, rawCopy, record } from './imports.js';
import { checkpoint, countSetting } from './measure.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const RECORDS = countSetting('BENCH_USERCTL_RECORDS', 1_000_000);

/** Writes the bench's records as an ndjson file, as an admin would have it. */
async function writeRecords(file: string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < RECORDS; i++) {
    if (!out.write(`${JSON.stringify(record(i))}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

/** Runs `userctl` (the checkout's cli/main.ts) to its end; its exit code. */
function userctl(args: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve) => child.on('exit', resolve));
}

/**
 * A digest of a file's lines that does not depend on their order: the sum of their sha256 values
 * (mod 2^256), and their count. The import's concurrent requests create users in an order of
 * their own, and an export lists users in creation order.
 */
async function linesDigest(file: string): Promise<string> {
  let sum = 0n;
  let lines = 0;
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    sum = (sum + BigInt(`0x${createHash('sha256').update(line).digest('hex')}`)) % 2n ** 256n;
    lines++;
  }
  return `${lines}:${sum.toString(16)}`;
}

/**
 * The round trip of a migration between projects, each leg timed: ndjson export with the password
 * hashes, import of that file into the emptied project, export again. The second file must hold
 * the same records as the first (the import keeps ids, identities, factors and hashes as they
 * were); the users' order is their new creation order.
 */
async function benchRoundTrip(
  pool: Pool,
  run: (args: string[]) => Promise<number | null>,
  log: (l: string) => void,
): Promise<{ name: string; rate: number }[]> {
  const files = ['.bench/roundtrip-1.ndjson', '.bench/roundtrip-2.ndjson'].map((f) => path.resolve(f));
  // The import leg warns, as the spec says it must, of each exported `false` flag that has no
  // effect on a new user: exit 3 (every record in, some with warnings) is its success.
  const timed = async (name: string, args: string[], success: readonly number[] = [0]) => {
    const started = process.hrtime.bigint();
    const code = await run(args);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (code === null || !success.includes(code)) throw new Error(`round trip, ${name}: exit ${code}`);
    log(`round trip, ${name}: ${RECORDS} users in ${seconds.toFixed(1)} s`);
    return { name, rate: RECORDS / seconds };
  };
  const exportTo = (file: string) => [
    'export',
    '--format',
    'ndjson',
    '--include-password-hashes',
    '-o',
    file,
  ];
  const first = await timed('export', exportTo(files[0] as string));
  await pool.query('DELETE FROM users');
  for (const old of [`${files[0]}.state`, `${files[0]}.results.ndjson`]) rmSync(old, { force: true });
  const imported = await timed(
    'import',
    ['import', files[0] as string, '--state', `${files[0]}.state`],
    [0, 3],
  );
  const again = await timed('export_again', exportTo(files[1] as string));
  const [a, b] = await Promise.all(files.map(linesDigest));
  if (a !== b) throw new Error('round trip: the second export differs from the first');
  log('round trip: the second export has the same records as the first');
  return [first, imported, again];
}

/** How long the replayed tasks may take to be applied before the bench gives up on them. */
const REPLAY_WAIT_MS = 30 * 60_000;

async function waitForReplayedTasks(pool: Pool): Promise<void> {
  const end = Date.now() + REPLAY_WAIT_MS;
  for (;;) {
    if (Date.now() > end) throw new Error('replay: its tasks were not applied within 30 minutes');
    const { rows } = await pool.query<{ pending: number; records: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, coalesce(sum(progress_total), 0)::int AS records
         FROM tasks WHERE replay_of IS NOT NULL`,
    );
    if (rows[0]?.pending === 0 && rows[0]?.records === RECORDS) return;
    await sleep(200);
  }
}

/**
 * `userctl import` of 1M users from an ndjson file, end to end (file -> 500 KB requests over HTTPS
 * -> Kafka -> worker -> Postgres, results file written), beside raw COPY of the same rows; then
 * `make replay` of those records into an emptied user table, until the replayed tasks are applied;
 * then the round trip of those users (export -> import into the emptied project -> export).
 */
export async function benchUserctl(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const copyPool = await freshSchema(databaseUrl, 'bench_userctl_copy');
  const copyRate = await rawCopy(copyPool, RECORDS);
  await copyPool.end();
  await dropSchema(databaseUrl, 'bench_userctl_copy');
  log(`raw COPY of ${RECORDS} records: ${Math.round(copyRate)} records/s`);

  const file = path.resolve('.bench/userctl-users.ndjson');
  await writeRecords(file);
  // A journal and results of an earlier run name another file: this run starts afresh.
  for (const old of [`${file}.state`, `${file}.results.ndjson`]) rmSync(old, { force: true });
  const pool = await freshSchema(databaseUrl, 'bench_userctl');
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  writeFileSync('.bench/userctl.crt', pems.cert);
  writeFileSync('.bench/userctl.key', pems.private, { mode: 0o600 });
  const projectFile = path.resolve('.bench/import-project.json');
  writeFileSync(
    projectFile,
    JSON.stringify({
      custom_attributes: [{ name: 'member_id', type: 'string' }],
      password_hashes: { export_allowed: true },
    }),
  );
  const service = await startBenchService('userctl', {
    databaseUrl,
    schema: 'bench_userctl',
    brokers,
    env: (port) => ({
      PROJECT_CONFIG: projectFile,
      HTTPS_PORT: String(port + 1),
      TLS_CERT_FILE: path.resolve('.bench/userctl.crt'),
      TLS_KEY_FILE: path.resolve('.bench/userctl.key'),
      // The whole file is accepted as fast as it is sent: back-pressure is not what is measured.
      IMPORT_PENDING_RECORDS_LIMIT: String(RECORDS * 2),
      AZURE_STORAGE_CONNECTION_STRING: blobs,
      AZURE_STORAGE_CONTAINER: 'bench-round-trip',
    }),
  });
  const { port, token } = service;
  try {
    await checkpoint(pool);
    const importedFrom = new Date();
    const started = process.hrtime.bigint();
    const code = await userctl(
      [
        'import',
        file,
        '--url',
        `https://localhost:${port + 1}`,
        '--ca-file',
        '.bench/userctl.crt',
        '--state',
        `${file}.state`,
      ],
      { USERCTL_TOKEN: token },
    );
    const importSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const users = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]?.n;
    if (code !== 0 || users !== RECORDS) throw new Error(`userctl import: exit ${code}, ${users} users`);
    log(`userctl import: ${RECORDS} records in ${importSeconds.toFixed(1)} s`);

    await pool.query('DELETE FROM users');
    const replayStarted = process.hrtime.bigint();
    const replayCode = await userctl(['replay', '--from', importedFrom.toISOString()], {
      ...service.env,
      LOG_LEVEL: 'warn',
    });
    if (replayCode !== 0) throw new Error(`replay: exit ${replayCode}`);
    await waitForReplayedTasks(pool);
    const replaySeconds = Number(process.hrtime.bigint() - replayStarted) / 1e9;
    const replayed = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]?.n;
    if (replayed !== RECORDS) throw new Error(`replay: ${replayed} users back of ${RECORDS}`);
    log(`replay: ${RECORDS} records in ${replaySeconds.toFixed(1)} s`);
    const cli = ['--url', `https://localhost:${port + 1}`, '--ca-file', '.bench/userctl.crt'];
    const roundTrip = await benchRoundTrip(
      pool,
      (args) => userctl([...args, ...cli], { USERCTL_TOKEN: token }),
      log,
    );
    return [
      ...roundTrip.map((leg) =>
        row(`roundtrip.${leg.name}.users_per_s`, leg.rate, 'users/s', 'raw COPY of the same rows', copyRate),
      ),
      row(
        'userctl.import.records_per_s',
        RECORDS / importSeconds,
        'records/s',
        'raw COPY of the same rows',
        copyRate,
        '>= 0.7 of COPY',
      ),
      row(
        'replay.records_per_s',
        RECORDS / replaySeconds,
        'records/s',
        'raw COPY of the same rows',
        copyRate,
      ),
    ];
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, 'bench_userctl');
  }
}
