import { type ChildProcess, spawn } from 'node:child_process';
import type { Pool } from '../../pipeline/db/pool.js';
import { testDatabaseUrl } from './database.js';

/**
 * Real `make pipeline` worker processes on a test schema, for tests that kill one. Each is
 * SIGKILLed after the describe block if still alive.
 */
export function useWorkerProcesses(schema: string): (env: Record<string, string>) => ChildProcess {
  const workers: ChildProcess[] = [];
  after(() => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  });
  return (env) => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${schema}`);
    const worker = spawn(process.execPath, ['--import', 'tsx', 'pipeline/main.ts'], {
      env: { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    workers.push(worker);
    return worker;
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
