import { expect } from 'chai';
import { renewLease } from '../../../pipeline/db/tasks/leases.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';

const RENEWALS = 100;

/**
 * A lease renewal writes no column of an index of tasks, so Postgres makes it a heap-only (HOT)
 * update: no index entry per renewal, and the row's versions pruned within its page.
 */
describe('task lease renewals', () => {
  const db = useTestSchema();

  /** The tasks table's updates and HOT updates so far, as the statistics have them. */
  const updates = async () => {
    const { rows } = await db().query<{ upd: string; hot: string }>(
      `SELECT pg_stat_clear_snapshot(), n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
        WHERE relname = 'tasks' AND schemaname = current_schema()`,
    );
    return { upd: Number(rows[0]?.upd ?? 0), hot: Number(rows[0]?.hot ?? 0) };
  };

  it(`are HOT updates: at least 90 of ${RENEWALS}`, async () => {
    const id = newTaskId('export');
    await db().query(
      `INSERT INTO tasks (id, kind, project_id, owner, attempt, lease_until)
       VALUES ($1, 'export', 'default', 'worker-1', 1, clock_timestamp() + interval '5 seconds')`,
      [id],
    );
    const client = await db().connect();
    try {
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      const before = await eventually(updates, () => true);
      for (let n = 0; n < RENEWALS; n++) {
        const ours = await renewLease(client, { id, attempt: 1, owner: 'worker-1' }, 5_000, n);
        expect(ours).to.equal(true);
      }
      // A backend sends its statistics at most once a second unless told to at its next statement.
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      const after = await eventually(updates, (seen) => seen.upd - before.upd >= RENEWALS, 10);
      expect(after.upd - before.upd, 'renewals counted').to.equal(RENEWALS);
      expect(after.hot - before.hot, 'of them HOT').to.be.at.least(RENEWALS * 0.9);
    } finally {
      client.release();
    }
  });
});
