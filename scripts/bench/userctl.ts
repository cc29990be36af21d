import { spawn } from 'node:child_process';
import { createWriteStream, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from 'selfsigned';
import type { Pool } from '../../pipeline/db/pool.js';
import { freshSchema, rawCopy, record } from './imports.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const RECORDS = Number(process.env.BENCH_USERCTL_RECORDS ?? 1_000_000);

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

async function waitForReplayedTasks(pool: Pool): Promise<void> {
  for (;;) {
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
 * `make replay` of those records into an emptied user table, until the replayed tasks are applied.
 */
export async function benchUserctl(
  databaseUrl: string,
  brokers: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const copyPool = await freshSchema(databaseUrl, 'bench_userctl_copy');
  const copyRate = await rawCopy(copyPool, RECORDS);
  await copyPool.end();
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
  writeFileSync(projectFile, JSON.stringify({ custom_attributes: [{ name: 'member_id', type: 'string' }] }));
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
    }),
  });
  const { port, token } = service;
  try {
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
    return [
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
  }
}
