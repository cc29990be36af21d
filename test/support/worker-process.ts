import { type ChildProcess, spawn } from 'node:child_process';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { TEST_SECRETS_KEY } from './admin-api.js';
import { testDatabaseUrl } from './database.js';
import { eventually } from './eventually.js';
import { tracked } from './leftover-processes.js';

/**
 * Real `make pipeline` worker processes on a test schema, for tests that kill one. Each is
 * SIGKILLed after the describe block if still alive.
 */
export function useWorkerProcesses(
  schema: string,
): (env: Record<string, string>, options?: { output?: boolean }) => ChildProcess {
  const workers: ChildProcess[] = [];
  after(() => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  });
  return (env, { output = false } = {}) => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${schema}`);
    const worker = spawn(process.execPath, ['--import', 'tsx', 'pipeline/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: url.toString(),
        TASK_SECRETS_KEY: TEST_SECRETS_KEY,
        LOG_LEVEL: 'warn',
        PIPELINE_HTTP_PORT: '0', // several workers run at once
        ...env,
      },
      // With `output`, its log lines (stdout) can be read by the test.
      stdio: ['ignore', output ? 'pipe' : 'ignore', 'inherit'],
    });
    workers.push(tracked(worker, schema));
    return worker;
  };
}

/** The settings a worker process needs to join the service's bus: none for the embedded queue. */
export function busEnv(config: ServiceConfig): Record<string, string> {
  if (config.kafkaBrokers.length === 0) return {};
  return {
    KAFKA_BROKERS: config.kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: config.kafkaTopicPrefix,
    KAFKA_PARTITIONS: String(config.kafkaTopics.partitions),
    KAFKA_REPLICATION_FACTOR: String(config.kafkaTopics.replicationFactor),
    KAFKA_MIN_INSYNC_REPLICAS: String(config.kafkaTopics.minInsyncReplicas),
  };
}

/** A task's saved progress and status ('missing' once deleted). */
export async function taskProgress(db: Pool, id: string): Promise<{ processed: number; status: string }> {
  const { rows } = await db.query<{ progress_processed: number; status: string }>(
    'SELECT progress_processed, status FROM tasks WHERE id = $1',
    [id],
  );
  return { processed: rows[0]?.progress_processed ?? 0, status: rows[0]?.status ?? 'missing' };
}

/** Waits (60 s at most) until the task has saved some progress, and returns it. */
export async function waitForProgress(db: Pool, id: string): Promise<{ processed: number; status: string }> {
  return eventually(
    () => taskProgress(db, id),
    (seen) => seen.processed > 0,
    60,
    10,
  );
}

/** Starts a worker, SIGKILLs it once the task shows progress, and returns the progress it left. */
export async function killOnceStarted(
  start: () => ChildProcess,
  db: Pool,
  id: string,
): Promise<{ processed: number; status: string }> {
  const worker = start();
  await waitForProgress(db, id);
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  return taskProgress(db, id);
}

/** Starts a worker, waits (100 s at most) for the task to complete, stops it; the final progress. */
export async function runToCompletion(
  start: () => ChildProcess,
  db: Pool,
  id: string,
): Promise<{ processed: number; status: string }> {
  const worker = start();
  const end = await eventually(
    () => taskProgress(db, id),
    (progress) => progress.status === 'completed',
    100,
  );
  worker.kill('SIGTERM');
  return end;
}
