import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { postgresQueueBus } from '../../pipeline/bus/postgres-queue.js';
import { configFromDocument } from '../../pipeline/config.js';
import { createLogger } from '../../pipeline/log.js';
import { upkeepRounds } from '../../pipeline/tasks/task-upkeep.js';
import { BENCH_PROJECT } from './bench-schema.js';
import { dropSchema, freshSchema } from './imports.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_upkeep';
const MEASURED_ROUNDS = 20;

/**
 * One full round of a process's upkeep (every sweep's turn taken: lapsed leases, abandoned files,
 * passed-over tasks, the relay, retention) with 100,000 completed tasks retained, beside the same
 * round with 1,000: the median of 20 rounds each. Each task as a completed export leaves it: its
 * file named, its event, its attempt. The container is Azurite's, holding no file.
 */
export async function benchUpkeep(
  databaseUrl: string,
  blobs: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const few = await medianRoundMs(databaseUrl, blobs, 1_000);
  const many = await medianRoundMs(databaseUrl, blobs, 100_000);
  log(
    `upkeep: a round takes ${few.toFixed(1)} ms with 1,000 retained tasks, ${many.toFixed(1)} ms with 100,000`,
  );
  return [row('upkeep.ms_per_round', many, 'ms', 'the same round with 1,000 retained tasks', few, '<= 1.2')];
}

async function medianRoundMs(databaseUrl: string, blobs: string, tasks: number): Promise<number> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const storage = await BlobStorage.open({ connectionString: blobs }, `bench-upkeep-${Date.now()}`);
  const log = createLogger('silent');
  try {
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
    const config = configFromDocument({
      log_level: 'silent',
      project: { id: BENCH_PROJECT, domain: 'bench.example' },
    });
    const bus = postgresQueueBus(pool, log);
    const times: number[] = [];
    for (let n = 0; n < MEASURED_ROUNDS; n++) {
      await pool.query('DELETE FROM upkeep_jobs'); // every sweep's turn is due
      const round = upkeepRounds(pool, bus, storage, config, log, () => [BENCH_PROJECT]);
      const started = process.hrtime.bigint();
      await round();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    await bus.close();
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)] as number;
  } finally {
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}
