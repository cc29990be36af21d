import { expect } from 'chai';
import { completeImport, failAbandonedTasks } from '../../../pipeline/db/tasks/endings.js';
import {
  claimTask,
  offerLapsedTasks,
  releaseTask,
  renewLease,
  type TakenTaskRow,
} from '../../../pipeline/db/tasks/leases.js';
import { offerPassedOverTasks, takeOutboxMessages } from '../../../pipeline/db/tasks/outbox.js';
import { lockImportProgress } from '../../../pipeline/db/tasks/progress.js';
import { withTransaction } from '../../../pipeline/db/transaction.js';
import { AttemptLost } from '../../../pipeline/errors.js';
import { TASK_ENDINGS } from '../../../pipeline/tasks/task-failure.js';
import { useTestSchema } from '../../support/database.js';

describe('db/tasks: leases, attempts and their fences', () => {
  const db = useTestSchema();
  const LEASE_MS = 60_000;

  async function newTask(id: string, created = 'clock_timestamp()', project = 'default'): Promise<void> {
    await db().query(
      `INSERT INTO tasks (id, kind, project_id, created_at) VALUES ($1, 'import', $2, ${created})`,
      [id, project],
    );
    await db().query(`INSERT INTO task_outbox (task_id, kind, message) VALUES ($1, 'import', '{}')`, [id]);
  }
  const claim = async (id: string | null, owner: string, leaseMs = LEASE_MS, runningTasksLimit = 0) =>
    claimTask(db(), 'import', id, { owner, leaseMs, runningTasksLimit });
  const must = (task: TakenTaskRow | undefined): TakenTaskRow => {
    if (!task) throw new Error('expected a claim');
    return task;
  };
  const lapse = (id: string) =>
    db().query(`UPDATE tasks SET lease_until = clock_timestamp() - interval '1 second' WHERE id = $1`, [id]);
  const attempts = async (id: string) =>
    (
      await db().query(
        'SELECT attempt, owner, ended_at IS NOT NULL AS ended, outcome FROM task_attempts WHERE task_id = $1 ORDER BY attempt',
        [id],
      )
    ).rows;
  const unpublished = async () =>
    (
      await db().query('SELECT task_id FROM task_outbox WHERE published_at IS NULL ORDER BY task_id')
    ).rows.map((r) => r.task_id);
  const end = () =>
    failAbandonedTasks(
      db(),
      { maxLapses: 3, exportLimitSeconds: 7200 },
      { expired: TASK_ENDINGS.expired(), timedOut: TASK_ENDINGS.timedOut() },
    );

  it('lets one worker claim a task while its lease runs, and records each attempt', async () => {
    await newTask('t1');
    const first = must(await claim('t1', 'worker-a'));
    expect(first.attempt).to.equal(1);
    expect(await claim('t1', 'worker-b'), 'a second delivery finds no task waiting').to.equal(undefined);
    expect(await renewLease(db(), first, LEASE_MS)).to.equal(true);
    expect(await attempts('t1')).to.deep.equal([
      { attempt: 1, owner: 'worker-a', ended: false, outcome: null },
    ]);
  });

  it('offers a lapsed lease again: the attempt ends lapsed, the message goes out again, the old owner is fenced', async () => {
    await newTask('t2');
    await withTransaction(db(), (client) => takeOutboxMessages(client, 10));
    expect(await unpublished()).to.deep.equal([]);
    const dead = must(await claim('t2', 'worker-a'));
    await lapse('t2');
    expect(await claim('t2', 'worker-b'), 'only the upkeep takes a lapsed lease over').to.equal(undefined);
    expect(await offerLapsedTasks(db(), 3)).to.deep.equal(['t2']);
    expect(await unpublished()).to.deep.equal(['t2']);
    const [again] = await withTransaction(db(), (client) => takeOutboxMessages(client, 10));
    expect(again).to.include({ task_id: 't2', again: true });
    const next = must(await claim('t2', 'worker-b'));
    expect(next.attempt).to.equal(2);
    expect(await attempts('t2')).to.deep.equal([
      { attempt: 1, owner: 'worker-a', ended: true, outcome: 'lapsed' },
      { attempt: 2, owner: 'worker-b', ended: false, outcome: null },
    ]);
    // The first worker, back from a pause, can write nothing more.
    expect(await renewLease(db(), dead, LEASE_MS)).to.equal(false);
    let lost: unknown;
    await withTransaction(db(), (client) => lockImportProgress(client, dead)).catch((err) => (lost = err));
    expect(lost).to.be.instanceOf(AttemptLost);
    lost = undefined;
    await completeImport(db(), dead).catch((err) => (lost = err));
    expect(lost).to.be.instanceOf(AttemptLost);
    await completeImport(db(), next);
    const { rows } = await db().query(`SELECT status FROM tasks WHERE id = 't2'`);
    expect(rows).to.deep.equal([{ status: 'completed' }]);
    expect((await attempts('t2')).at(-1)).to.deep.include({ ended: true, outcome: 'completed' });
    const outbox = await db().query(`SELECT 1 FROM task_outbox WHERE task_id = 't2'`);
    expect(outbox.rowCount, 'a task that ended drops its message').to.equal(0);
  });

  it('skips a lapsed row another transaction holds instead of waiting for it', async () => {
    await newTask('held');
    await newTask('free');
    await claim('held', 'worker-a');
    await claim('free', 'worker-a');
    await lapse('held');
    await lapse('free');
    const holder = await db().connect();
    try {
      // A worker's batch on a host that vanished: its transaction holds the task's row.
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM tasks WHERE id = 'held' FOR UPDATE`);
      expect(await offerLapsedTasks(db(), 3)).to.deep.equal(['free']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await offerLapsedTasks(db(), 3)).to.deep.equal(['held']);
    // Ended here, so that the next tests' claims do not take them first as handed-over tasks.
    await db().query(
      `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE id IN ('held', 'free')`,
    );
  });

  it('releases a task its worker stops on: another claims it at once', async () => {
    await newTask('t3');
    await withTransaction(db(), (client) => takeOutboxMessages(client, 10));
    const first = must(await claim('t3', 'worker-a'));
    expect(await releaseTask(db(), first)).to.equal(true);
    expect(await unpublished()).to.deep.equal(['t3']);
    const second = must(await claim('t3', 'worker-b'));
    expect(second.attempt).to.equal(2);
    expect((await attempts('t3'))[0]).to.deep.include({ outcome: 'released', ended: true });
    expect(await releaseTask(db(), first), 'an attempt releases only what it owns').to.equal(false);
  });

  it('never expires a task for waiting, and ends one whose workers keep dying TaskExpired', async () => {
    await newTask('waiting', "clock_timestamp() - interval '30 days'");
    await newTask('dying');
    await withTransaction(db(), (client) => takeOutboxMessages(client, 10));
    for (let n = 0; n < 3; n++) {
      expect(await end()).to.deep.equal([]);
      await claim('dying', `worker-${n}`);
      await lapse('dying');
      expect(await offerLapsedTasks(db(), 3)).to.deep.equal(['dying']);
      if (n < 2) await withTransaction(db(), (client) => takeOutboxMessages(client, 10)); // the relay
    }
    expect(await unpublished(), 'the third lapse is not offered again').not.to.include('dying');
    expect((await end()).map((t) => t.id)).to.deep.equal(['dying']);
    const { rows } = await db().query(
      `SELECT id, status, error->>'reason' AS reason FROM tasks WHERE id IN ('dying', 'waiting') ORDER BY id`,
    );
    expect(rows).to.deep.equal([
      { id: 'dying', status: 'completed', reason: 'TaskExpired' },
      { id: 'waiting', status: 'pending', reason: null },
    ]);
  });

  it("takes the next task fairly, whatever the message: the project with fewer running, then the message's own", async () => {
    // Earlier tests' waiting tasks ended, so that only these three wait.
    await db().query(
      `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE status = 'pending' AND owner IS NULL`,
    );
    await newTask('fair-a1', 'clock_timestamp()', 'fair-a');
    await newTask('fair-b1', 'clock_timestamp()', 'fair-b');
    const first = must(await claim('fair-a1', 'worker-a'));
    expect(first).to.deep.include({ id: 'fair-a1', message: null }); // its body is in hand
    expect(must(await claim('fair-b1', 'worker-a')).id).to.equal('fair-b1');
    await db().query(
      `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE id = 'fair-b1'`,
    );
    await newTask('fair-a2', 'clock_timestamp()', 'fair-a');
    await newTask('fair-b2', 'clock_timestamp()', 'fair-b');
    const next = must(await claim('fair-a2', 'worker-a'));
    expect(next.id, 'project B has nothing running, though served since A was').to.equal('fair-b2');
    expect(next.message, "another task's body comes from the outbox").to.equal('{}');
    expect(must(await claim('fair-b2', 'worker-a')).id).to.equal('fair-a2');
    expect(await claim('fair-a1', 'worker-a'), 'nothing left waiting').to.equal(undefined);
  });

  describe("a project's bound on its running tasks", () => {
    const endWaiting = () =>
      db().query(
        `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE status = 'pending'`,
      );
    const relayed = () => withTransaction(db(), (client) => takeOutboxMessages(client, 100));
    beforeEach(endWaiting);

    it("passes over a project at its own bound or the deployment's, and takes its task once one ends", async () => {
      await db().query(`INSERT INTO projects (id, domain, document, running_tasks_limit)
                        VALUES ('bound-a', 'a.bound.test', 'sealed', 1)`);
      await newTask('bound-a1', 'clock_timestamp()', 'bound-a');
      await newTask('bound-a2', 'clock_timestamp()', 'bound-a');
      const running = must(await claim('bound-a1', 'worker-a'));
      expect(await claim('bound-a2', 'worker-a'), 'project A runs its one task').to.equal(undefined);
      await completeImport(db(), running);
      expect(must(await claim(null, 'worker-a')).id, 'a freed slot takes it, with no message').to.equal(
        'bound-a2',
      );
      // A project with no bound of its own has the deployment's.
      await newTask('bound-d1', 'clock_timestamp()', 'bound-d');
      await newTask('bound-d2', 'clock_timestamp()', 'bound-d');
      must(await claim('bound-d1', 'worker-a', LEASE_MS, 1));
      expect(await claim('bound-d2', 'worker-a', LEASE_MS, 1)).to.equal(undefined);
      expect(must(await claim('bound-d2', 'worker-a', LEASE_MS, 2)).id).to.equal('bound-d2');
    });

    it('relays the first message of a task a freed slot claimed before it as a request, not as offered again', async () => {
      await newTask('pulled-1', 'clock_timestamp()', 'pulled');
      expect(must(await claim(null, 'worker-a')).id).to.equal('pulled-1');
      const [first] = await relayed();
      expect(first, 'a replay reads it as the request it is').to.include({
        task_id: 'pulled-1',
        again: false,
      });
    });

    it('offers again a passed-over task nothing would wake: its project under the bound, claiming nothing', async () => {
      await db().query(`INSERT INTO projects (id, domain, document, running_tasks_limit)
                        VALUES ('passed', 'passed.bound.test', 'sealed', 1)`);
      await newTask('passed-1', 'clock_timestamp()', 'passed');
      await newTask('passed-2', 'clock_timestamp()', 'passed');
      await newTask('free-1', 'clock_timestamp()', 'unbounded');
      await relayed();
      const ran = must(await claim('passed-1', 'worker-a'));
      expect(
        await offerPassedOverTasks(db(), 0, 0),
        'at its bound, the slot it frees takes the next; a project with no bound is never passed over',
      ).to.deep.equal([]);
      await completeImport(db(), ran);
      // The slot it freed died before it could take the next: after the wait, the oldest goes out again.
      expect(await offerPassedOverTasks(db(), 3600, 0), 'not before the wait').to.deep.equal([]);
      expect(await offerPassedOverTasks(db(), 0, 0)).to.deep.equal(['passed-2']);
      const [again] = await relayed();
      expect(again, 'marked offered again: a replay does not read it as a request').to.include({
        task_id: 'passed-2',
        again: true,
      });
    });
  });
});
