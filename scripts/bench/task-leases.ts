import { setTimeout as sleep } from 'node:timers/promises';
import { renewLease } from '../../pipeline/db/tasks/leases.js';
import { newTaskId } from '../../schemas/task-id.js';
import { BENCH_PROJECT } from './bench-schema.js';
import { dropSchema, freshSchema } from './imports.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_task_leases';
const RENEWALS = 1_000;

/**
 * A running task's lease renewals as a worker makes them (renewLease, with its progress), one
 * after another on one connection: how many of them Postgres made heap-only (HOT) updates, of all
 * the updates of the tasks table meanwhile.
 */
export async function benchTaskLeases(databaseUrl: string, log: (l: string) => void): Promise<BenchRow[]> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const client = await pool.connect();
  try {
    const id = newTaskId('export');
    await client.query(
      `INSERT INTO tasks (id, kind, project_id, owner, attempt, lease_until)
       VALUES ($1, 'export', $2, 'bench', 1, clock_timestamp() + interval '5 seconds')`,
      [id, BENCH_PROJECT],
    );
    const counts = async () => {
      // A backend reports its statistics at its next statement once told to.
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      await sleep(100);
      const { rows } = await pool.query<{ upd: string; hot: string }>(
        `SELECT pg_stat_clear_snapshot(), n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
          WHERE relname = 'tasks' AND schemaname = $1`,
        [SCHEMA],
      );
      return { upd: Number(rows[0]?.upd ?? 0), hot: Number(rows[0]?.hot ?? 0) };
    };
    const before = await counts();
    for (let n = 0; n < RENEWALS; n++) await renewLease(client, { id, attempt: 1, owner: 'bench' }, 5_000, n);
    const after = await counts();
    const updates = after.upd - before.upd;
    const hot = after.hot - before.hot;
    log(`task leases: ${updates} renewals, ${hot} of them HOT`);
    return [
      row(
        'tasks.lease_renewal_hot_ratio',
        hot,
        'HOT updates',
        'renewals (updates of tasks)',
        updates,
        '>= 0.9',
      ),
    ];
  } finally {
    client.release();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}
