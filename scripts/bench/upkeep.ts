import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { postgresQueueBus } from '../../pipeline/bus/postgres-queue.js';
import { configFromDocument } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { upkeepRounds } from '../../pipeline/tasks/task-upkeep.js';
import { BENCH_PROJECT } from './bench-schema.js';
import { dropSchema, freshSchema } from './imports.js';
import { median } from './measure.js';
import { type BenchRow, row } from './report.js';

const MEASURED_ROUNDS = 40;

/**
 * One full round of a process's upkeep (every sweep's turn taken: lapsed leases, abandoned files,
 * passed-over tasks, the relay, retention) with 100,000 completed tasks retained, beside the same
 * round with 1,000: the median of 40 rounds each, the two taken in turn so that the machine's
 * drift during the run weighs on both alike (a round takes a few milliseconds). The container is
 * Azurite's, holding no file.
 */
export async function benchUpkeep(
  databaseUrl: string,
  blobs: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const few = await retainedTasks(databaseUrl, blobs, 'bench_upkeep_few', 1_000);
  try {
    const many = await retainedTasks(databaseUrl, blobs, 'bench_upkeep_many', 100_000);
    try {
      const times = { few: [] as number[], many: [] as number[] };
      for (let n = 0; n < MEASURED_ROUNDS; n++) {
        times.few.push(await few.roundMs());
        times.many.push(await many.roundMs());
      }
      const [fewMs, manyMs] = [median(times.few), median(times.many)];
      log(
        `upkeep: a round takes ${fewMs.toFixed(1)} ms with 1,000 retained tasks, ${manyMs.toFixed(1)} ms with 100,000`,
      );
      return [
        row('upkeep.ms_per_round', manyMs, 'ms', 'the same round with 1,000 retained tasks', fewMs, '<= 1.2'),
      ];
    } finally {
      await many.close();
    }
  } finally {
    await few.close();
  }
}

/** A schema of its own holding `tasks` completed exports, and the time of one full upkeep round in it. */
async function retainedTasks(
  databaseUrl: string,
  blobs: string,
  schema: string,
  tasks: number,
): Promise<{ roundMs(): Promise<number>; close(): Promise<void> }> {
  const pool = await freshSchema(databaseUrl, schema);
  const drop = async () => {
    await pool.end();
    await dropSchema(databaseUrl, schema);
  };
  let storage: BlobStorage;
  try {
    await retain(pool, tasks);
    storage = await BlobStorage.open({ connectionString: blobs }, `bench-upkeep-${tasks}-${Date.now()}`);
  } catch (err) {
    await drop();
    throw err;
  }
  const log = createLogger('silent');
  const config = configFromDocument({
    log_level: 'silent',
    project: { id: BENCH_PROJECT, domain: 'bench.example' },
  });
  const bus = postgresQueueBus(pool, log);
  return {
    async roundMs() {
      await pool.query('DELETE FROM upkeep_jobs'); // every sweep's turn is due
      const round = upkeepRounds(pool, bus, storage, config, log, () => [BENCH_PROJECT]);
      const started = process.hrtime.bigint();
      await round();
      return Number(process.hrtime.bigint() - started) / 1e6;
    },
    async close() {
      await bus.close();
      await drop();
    },
  };
}

/** `tasks` completed exports, as each leaves them: its file named, its event, its attempt. */
async function retain(pool: Pool, tasks: number): Promise<void> {
  await pool.query(
    `INSERT INTO tasks (id, kind, project_id, status, created_at, completed_at, file_name, attempt)
     SELECT 'userexport_' || lpad(n::text, 32, '0'), 'export', $2, 'completed',
            clock_timestamp() - interval '1 hour', clock_timestamp() - interval '30 minutes',
            $2 || '/file-' || n || '.csv', 1
       FROM generate_series(1, $1) n`,
    [tasks, BENCH_PROJECT],
  );
  await pool.query(
    `INSERT INTO task_attempts (task_id, attempt, owner, ended_at, outcome) SELECT id, 1, 'bench', completed_at, 'completed' FROM tasks`,
  );
  await pool.query(
    `INSERT INTO task_events (task_id, project_id, type, payload, fanned_out_at)
     SELECT id, project_id, 'user_export.completed', '{}', completed_at FROM tasks`,
  );
  await pool.query('VACUUM ANALYZE tasks, task_events, task_attempts');
}
