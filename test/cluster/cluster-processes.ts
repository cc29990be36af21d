import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_DOMAIN, TEST_ORIGIN, TEST_SECRETS_KEY, type TestKeys } from '../support/admin-api.js';
import { testDatabaseUrl } from '../support/database.js';

/** The three-broker Kafka cluster `make test` and `make test-cluster` start. */
export function clusterBrokers(): string[] {
  const brokers = process.env.TEST_KAFKA_CLUSTER_BROKERS;
  if (!brokers)
    throw new Error('TEST_KAFKA_CLUSTER_BROKERS is not set: run `make test` or `make test-cluster`');
  return brokers.split(',');
}

/** Stops (SIGKILL) or starts one node of the cluster, through the project's script. */
export function clusterNode(action: 'kill-node' | 'start-node', node: number): void {
  execFileSync('scripts/services/kafka-cluster.sh', [action, String(node)], { stdio: 'ignore' });
}

/** A service process of the simulated deployment. */
export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** API processes: the base URL of the public port. */
  readonly url?: string;
  /** Resolves with the exit code once the process exited. */
  exited(): Promise<number | null>;
  /** Resolves once the process says it runs (rejects if it exits first). */
  ready(): Promise<void>;
}

/**
 * API and worker processes (`api/main.ts` without workers, `pipeline/main.ts`) of one deployment
 * on a test schema and the cluster, as separate machines would run them; all SIGKILLed after the
 * describe block if still alive.
 */
export function useDeployment(
  schema: string,
  keys: () => TestKeys,
  env: () => Record<string, string>,
): { api(name: string): Promise<ServiceProcess>; worker(name: string): ServiceProcess } {
  const processes: ServiceProcess[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cluster-'));
  after(() => {
    for (const p of processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const baseEnv = () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${schema}`);
    const projectFile = path.join(dataDir, 'project.json');
    writeFileSync(
      projectFile,
      JSON.stringify({
        domain: TEST_DOMAIN,
        public_origin: TEST_ORIGIN,
        admin_api: { jwks: { keys: [keys().publicJwk] } },
      }),
    );
    return {
      ...process.env,
      DATABASE_URL: url.toString(),
      DATA_DIR: dataDir,
      PROJECT_CONFIG: projectFile,
      TASK_SECRETS_KEY: TEST_SECRETS_KEY,
      KAFKA_BROKERS: clusterBrokers().join(','),
      KAFKA_REPLICATION_FACTOR: '3',
      KAFKA_MIN_INSYNC_REPLICAS: '2',
      KAFKA_PARTITIONS: '12',
      LOG_LEVEL: 'warn',
      ...env(),
    };
  };

  /** Records a process, ready once it prints `readyLine` on its stdout. */
  const track = (name: string, child: ChildProcess, readyLine: string, url?: string): ServiceProcess => {
    const exit = once(child, 'exit').then(([code]) => code as number | null);
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(readyLine)) resolve();
      });
      void exit.then((code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
    });
    ready.catch(() => {}); // a process killed on purpose is not a failure of its start
    const made = { name, child, ...(url ? { url } : {}), exited: () => exit, ready: () => ready };
    processes.push(made);
    return made;
  };

  return {
    async api(name) {
      const port = 21_000 + Math.floor(Math.random() * 4_000);
      const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
        env: {
          ...baseEnv(),
          PORT: String(port),
          HTTPS_PORT: String(port + 4_000),
          API_OPERATOR_PORT: String(port + 8_000),
          // The test calls it over plain HTTP, as from behind a TLS-terminating proxy.
          TRUST_PROXY: 'true',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const made = track(name, child, 'Admin API on', `http://127.0.0.1:${port}`);
      await made.ready();
      return made;
    },
    worker(name) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'pipeline/main.ts'], {
        env: { ...baseEnv(), PIPELINE_HTTP_PORT: '0', WORKER_CONCURRENCY: '2' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      return track(name, child, 'Pipeline workers running');
    },
  };
}
