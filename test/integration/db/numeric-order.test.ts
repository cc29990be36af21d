import { expect } from 'chai';
import { readQueueLog } from '../../../pipeline/db/task-queue.js';
import { withTransaction } from '../../../pipeline/db/transaction.js';
import { takeUserChanges } from '../../../pipeline/db/user-changes.js';
import { useTestSchema } from '../../support/database.js';

describe('db: queue positions and change sequences are read in number order', () => {
  const db = useTestSchema();

  it('a replay range across 100 and 1,000 reads every message once, in order, page by page', async () => {
    await db().query(
      `INSERT INTO task_queue (task_id, message_key, kind, message, position)
       SELECT 'userimport_' || n, 'userimport_' || n, 'import', '{}', n FROM generate_series(90, 1010) n`,
    );
    const read: number[] = [];
    let from = '95';
    for (;;) {
      const page = await readQueueLog(db(), 'import', from, '1005', 7);
      if (page.length === 0) break;
      read.push(...page.map((row) => Number(row.position)));
      from = String(Number(page[page.length - 1]?.position) + 1);
    }
    const expected = Array.from({ length: 1005 - 95 }, (_, i) => 95 + i);
    expect(read).to.deep.equal(expected);
  });

  it("the relay's take walks the primary key in its order, with no sort over the whole table", async () => {
    await db().query(
      `INSERT INTO user_changes (seq, user_id, project_id)
       SELECT n, '00000000-0000-4000-8000-000000000000'::uuid, 'default' FROM generate_series(95, 130) n`,
    );
    await db().query('ANALYZE user_changes');
    const taken = await withTransaction(db(), (tx) => takeUserChanges(tx, 10));
    expect(taken.map((c) => Number(c.seq))).to.deep.equal([95, 96, 97, 98, 99, 100, 101, 102, 103, 104]);
    const plan = await withTransaction(db(), async (tx) => {
      let statement: { text: string; values: unknown[] } | undefined;
      const recording = {
        query: (text: string, values: unknown[]) => {
          statement = { text, values };
          return tx.query(text, values);
        },
      } as unknown as typeof tx;
      await takeUserChanges(recording, 10);
      if (!statement) throw new Error('takeUserChanges ran no statement');
      // On a small table the planner may choose a sort anyway: the question is whether the order
      // the statement asks for is the index's, so a sort is priced out of reach.
      await tx.query('SET LOCAL enable_sort = off');
      const { rows } = await tx.query(`EXPLAIN ${statement.text}`, statement.values);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).to.contain('Index Scan using user_changes_pkey');
    expect(plan).not.to.match(/\bSort\b/);
  });
});
