import { expect } from 'chai';
import { failAbandonedTasks } from '../../../pipeline/db/tasks.js';
import { TASK_ENDINGS } from '../../../pipeline/tasks/task-failure.js';
import { useTestSchema } from '../../support/database.js';

describe('db/tasks: abandoned tasks', () => {
  const db = useTestSchema();
  const end = () =>
    failAbandonedTasks(
      db(),
      { staleSeconds: 60, exportLimitSeconds: 7200 },
      { expired: TASK_ENDINGS.expired(), timedOut: TASK_ENDINGS.timedOut() },
    );

  it('ends the tasks nobody works on, skipping a row another transaction holds instead of waiting', async () => {
    await db().query(
      `INSERT INTO tasks (id, kind, project_id, created_at)
       VALUES ('held', 'import', 'default', clock_timestamp() - interval '1 hour'),
              ('free', 'import', 'default', clock_timestamp() - interval '1 hour'),
              ('fresh', 'import', 'default', clock_timestamp())`,
    );
    const holder = await db().connect();
    try {
      // A worker's batch on a host that vanished: its transaction holds the task's row.
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM tasks WHERE id = 'held' FOR UPDATE`);
      expect((await end()).map((t) => t.id)).to.deep.equal(['free']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect((await end()).map((t) => t.id)).to.deep.equal(['held']);
    const { rows } = await db().query(`SELECT id, status FROM tasks ORDER BY id`);
    expect(rows).to.deep.equal([
      { id: 'free', status: 'completed' },
      { id: 'fresh', status: 'pending' },
      { id: 'held', status: 'completed' },
    ]);
  });
});
