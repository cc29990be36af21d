import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Pool as HttpPool } from 'undici';

/**
 * The key every bench process seals and opens task secrets with: outside the embedded default a
 * process refuses to start without one, and the API, the workers and a replay must share it. The
 * same in every run: the generated schemas are kept between runs, with the projects sealed in them.
 */
export const BENCH_SECRETS_KEY = Buffer.alloc(32, 'bench').toString('base64');

/** How the bench's topics are made on its single broker: one replica. */
export const BENCH_KAFKA_TOPICS = { partitions: 4, replicationFactor: 1, minInsyncReplicas: 1 } as const;

/** The environment of every service process the bench starts, beside its own. */
const BENCH_SERVICE_ENV = {
  PIPELINE_HTTP_PORT: '0', // several bench workers may run at once: none serves the operator port
  API_OPERATOR_PORT: '0',
  TASK_SECRETS_KEY: BENCH_SECRETS_KEY,
  KAFKA_PARTITIONS: String(BENCH_KAFKA_TOPICS.partitions),
  KAFKA_REPLICATION_FACTOR: String(BENCH_KAFKA_TOPICS.replicationFactor),
  KAFKA_MIN_INSYNC_REPLICAS: String(BENCH_KAFKA_TOPICS.minInsyncReplicas),
};

/** A service process started for a benchmark, stopped with SIGTERM. */
export interface BenchProcess {
  readonly pid: number | undefined;
  /** The last of what it wrote on stdout (its log lines). */
  output(): string;
  /** Ends it with SIGKILL, as a machine that dies would. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** How much of a process's stdout is kept for `output()`. */
const OUTPUT_KEPT = 256 * 1024;

/**
 * Starts the compiled form of a service entry point (`api/main.ts` runs `dist/api/main.js`, as
 * `make api` and `make pipeline` do, with the same node flags; `make bench` builds first) and
 * resolves once it prints `ready` on stdout.
 */
export function startProcess(
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<BenchProcess> {
  const compiled = path.join('dist', entry.replace(/\.ts$/, '.js'));
  // The facade and the workers run with the heap caps of `make api` and `make pipeline`
  // (API_HEAP_MB and PIPELINE_HEAP_MB, set by the Makefile).
  const cap = { 'api/main.ts': process.env.API_HEAP_MB, 'pipeline/main.ts': process.env.PIPELINE_HEAP_MB }[
    entry
  ];
  const v8 = cap ? [`--max-old-space-size=${cap}`] : [];
  // The workers' young generation, bounded as `make pipeline` bounds it (PIPELINE_SEMI_SPACE_MB).
  const semiSpace = process.env.PIPELINE_SEMI_SPACE_MB;
  if (entry === 'pipeline/main.ts' && semiSpace) v8.push(`--max-semi-space-size=${semiSpace}`);
  // ... and the rest of their V8 flags (PIPELINE_V8_FLAGS).
  const others = process.env.PIPELINE_V8_FLAGS?.split(' ').filter((f) => f !== '') ?? [];
  if (entry === 'pipeline/main.ts') v8.push(...others);
  // ... and their allocator's settings (PIPELINE_GLIBC_TUNABLES).
  const tunables = process.env.PIPELINE_GLIBC_TUNABLES;
  const allocator = entry === 'pipeline/main.ts' && tunables ? { GLIBC_TUNABLES: tunables } : {};
  return spawnUntilReady(
    entry,
    [...v8, compiled, ...args],
    { ...BENCH_SERVICE_ENV, ...allocator, ...env },
    ready,
  );
}

/** Starts a bench script of its own (run through tsx, as the bench is) once it prints `ready`. */
export function startBenchScript(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<BenchProcess> {
  return spawnUntilReady(script, ['--import', 'tsx', script], env, ready);
}

async function spawnUntilReady(
  name: string,
  nodeArgs: string[],
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<BenchProcess> {
  // BENCH_CPU_PROF_DIR: each service process writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, ...nodeArgs], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // What it wrote, for the error when it stops before it is ready (its log lines name why).
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
      if (output.includes(ready)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output.slice(-4000)}`)));
  });
  return {
    pid: child.pid,
    output: () => output,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A port for a bench server (and the next one up): random, so that a run does not meet the leftovers
 * of another, and below the kernel's ephemeral range (32768 and up), where one of the bench's own
 * outgoing connections could already hold it.
 */
export function benchPort(): number {
  return 24_000 + Math.floor(Math.random() * 8_000);
}

/** The connection string of a schema of the bench database. */
export function schemaUrl(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/**
 * A fresh admin key pair for a bench run: writes its public JWKS to .bench/<name>-jwks.json (for
 * ADMIN_JWKS_FILE) and returns a token for the API on `port`, valid for an hour.
 */
export async function benchAdminKeys(
  name: string,
  port: number,
): Promise<{ jwksFile: string; token: string }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  mkdirSync('.bench', { recursive: true });
  const jwksFile = path.resolve(`.bench/${name}-jwks.json`);
  writeFileSync(
    jwksFile,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), alg: 'RS256', kid: 'bench' }] }),
  );
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
    .setAudience(`http://localhost:${port}`)
    .setExpirationTime('1h')
    .sign(privateKey);
  return { jwksFile, token };
}

/** The API and a worker of one bench section, on a schema of its own, with an admin token. */
export interface BenchService {
  readonly port: number;
  readonly token: string;
  /** The services' settings (for a command run against the same service, `make replay` say). */
  readonly env: NodeJS.ProcessEnv;
  /**
   * POSTs an import request body over plain HTTP (as behind a TLS proxy), to the project of `host`
   * (by default the configured one); the task id.
   */
  importRequest(body: string, host?: string): Promise<string>;
  /** POSTs a JSON body (or none) to an admin path of the configured project; the answer's JSON. */
  post(path: string, body?: string): Promise<Record<string, unknown>>;
  /** The section's first worker. */
  readonly worker: BenchProcess;
  /** Starts one more worker on the same service (`env` on top of its settings). */
  startWorker(env?: NodeJS.ProcessEnv): Promise<BenchProcess>;
  stop(): Promise<void>;
}

/**
 * Starts a section's API and worker on `schema` with Kafka under a fresh topic prefix, a fresh
 * admin key (`name` names its JWKS file) and `env` on top, and keeps `connections` HTTP
 * connections for its import calls.
 */
export async function startBenchService(
  name: string,
  {
    databaseUrl,
    schema,
    brokers,
    env = () => ({}),
    connections = 4,
  }: {
    databaseUrl: string;
    schema: string;
    brokers: string;
    env?: (port: number) => NodeJS.ProcessEnv;
    connections?: number;
  },
): Promise<BenchService> {
  const port = benchPort();
  const { jwksFile, token } = await benchAdminKeys(name, port);
  const serviceEnv = {
    DATABASE_URL: schemaUrl(databaseUrl, schema),
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: `bench${name}${Date.now()}.`,
    ADMIN_JWKS_FILE: jwksFile,
    ...BENCH_SERVICE_ENV,
    TRUST_PROXY: 'true',
    PORT: String(port),
    ...env(port),
  };
  const api = await startProcess('api/main.ts', [], serviceEnv, 'Admin API on');
  const startWorker = (env: NodeJS.ProcessEnv = {}) =>
    startProcess('pipeline/main.ts', [], { ...serviceEnv, ...env }, 'Pipeline workers running');
  const worker = await startWorker();
  const workers = [worker];
  const http = new HttpPool(`http://localhost:${port}`, { connections });
  const post = async (path: string, body?: string, host?: string) => {
    const res = await http.request({
      path,
      method: 'POST',
      headers: {
        ...(host ? { host } : {}),
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        'x-forwarded-proto': 'https',
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path} refused: ${res.statusCode} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  return {
    port,
    token,
    env: serviceEnv,
    worker,
    async startWorker(env) {
      const started = await startWorker(env);
      workers.push(started);
      return started;
    },
    post: (path, body) => post(path, body),
    async importRequest(body, host) {
      return String((await post('/_api/admin/users/import', body, host)).id);
    },
    async stop() {
      await http.close();
      for (const w of workers) await w.stop();
      await api.stop();
    },
  };
}
