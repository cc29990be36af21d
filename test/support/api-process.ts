import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { TEST_SECRETS_KEY } from './admin-api.js';
import { testDatabaseUrl } from './database.js';
import { tracked } from './leftover-processes.js';

/** A real API process (`make start`'s shape, with its workers) on a test schema, over HTTP and HTTPS. */
export interface ApiProcess {
  readonly url: string;
  readonly httpsUrl: string;
  /** Its operator port: /healthz, /readyz and /metrics. */
  readonly operatorUrl: string;
  /** Its resident memory now, in bytes (Linux); undefined once it exited. */
  rss(): number | undefined;
  /** Its data folder: the development key and the running-service record `userctl` reads. */
  readonly dataDir: string;
  /** Every log line it wrote so far (JSON lines). */
  logLines(): Record<string, unknown>[];
}

/**
 * Starts `api/main.ts --with-workers` for the calling describe block on `schema`, with a
 * certificate of its own for HTTPS; stopped after the block.
 */
export function useApiProcess(schema: () => string, env: Record<string, string> = {}): () => ApiProcess {
  let child: ChildProcess | undefined;
  let api: ApiProcess | undefined;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'api-process-'));
  let output = '';

  before(async function () {
    this.timeout(60_000);
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
    writeFileSync(path.join(dataDir, 'test.crt'), pems.cert);
    writeFileSync(path.join(dataDir, 'test.key'), pems.private, { mode: 0o600 });
    // Below the kernel's ephemeral range (32768 and up), and the operator port below the test
    // services' ports (ClickHouse 18123 and 19000, the Kafka brokers 19092 to 19395).
    const port = 20_000 + Math.floor(Math.random() * 5_000);
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${schema()}`);
    child = tracked(
      spawn(process.execPath, ['--import', 'tsx', 'api/main.ts', '--with-workers'], {
        env: {
          ...process.env,
          DATABASE_URL: url.toString(),
          DATA_DIR: dataDir,
          PORT: String(port),
          HTTPS_PORT: String(port + 5_000),
          API_OPERATOR_PORT: String(port - 8_000),
          TLS_CERT_FILE: path.join(dataDir, 'test.crt'),
          TLS_KEY_FILE: path.join(dataDir, 'test.key'),
          TASK_SECRETS_KEY: TEST_SECRETS_KEY,
          // The tests sign with the development key of the data folder, as userctl finds it.
          DEVELOPMENT_KEYS: 'true',
          LOG_LEVEL: 'info',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      schema(),
    );
    await new Promise<void>((resolve, reject) => {
      child?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Admin API on')) resolve();
      });
      child?.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child?.on('exit', (code) => reject(new Error(`the API exited with ${code}: ${output}`)));
    });
    api = {
      url: `http://localhost:${port}`,
      httpsUrl: `https://localhost:${port + 5_000}`,
      operatorUrl: `http://localhost:${port - 8_000}`,
      dataDir,
      rss: () => {
        let status = '';
        try {
          status = readFileSync(`/proc/${child?.pid}/status`, 'utf8');
        } catch {
          return undefined; // exited
        }
        const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
        return kib === undefined ? undefined : Number(kib) * 1024;
      },
      logLines: () =>
        output
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child?.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  return () => {
    if (!api) throw new Error('the API process is not started yet');
    return api;
  };
}
