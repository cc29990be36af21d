import { expect } from 'chai';
import { EngineError } from '../../../pipeline/errors.js';
import { createLogger } from '../../../pipeline/log.js';
import { stalledAttempts } from '../../../pipeline/operator/metrics.js';
import { type TaskRun, taskRunner } from '../../../pipeline/tasks/run-task.js';
import { makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

describe('tasks/run-task: retries and the failure that ends a task', () => {
  const db = useTestSchema();
  const log = createLogger('silent');

  async function runToEnd(id: string, fail: () => Error): Promise<{ tries: number; error: unknown }> {
    await db().query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'import', 'default')`, [id]);
    await db().query(`INSERT INTO task_outbox (task_id, kind, message) VALUES ($1, 'import', '{}')`, [id]);
    const config = testConfig(await makeTestKeys(), {}, { task_retry_seconds: 300 });
    const runner = taskRunner(db(), config, log, new AbortController().signal);
    let tries = 0;
    const taken = await runner.take('import', { task_id: id, body: '{}' }, async () => {
      tries++;
      throw fail();
    });
    await taken?.finished;
    const { rows } = await db().query('SELECT status, failed_at, error FROM tasks WHERE id = $1', [id]);
    // A task ends `completed` either way; a failed one with failed_at and its error.
    expect(rows[0]?.status).to.equal('completed');
    expect(rows[0]?.failed_at).to.be.an.instanceOf(Date);
    return { tries, error: rows[0]?.error };
  }

  it('ends a task at once with its code when the fault will repeat', async () => {
    const { tries, error } = await runToEnd(
      'userimport_engine',
      () => new EngineError('ExportPartsGone', 'gone'),
    );
    expect(tries).to.equal(1);
    expect(error).to.deep.include({ name: 'InternalError', reason: 'UnexpectedError' });
    expect((error as { info?: unknown }).info).to.deep.equal({ code: 'ExportPartsGone' });
  });

  it('ends a task with the reason its fault names, once: an export on a worker without blob storage', async () => {
    const { tries, error } = await runToEnd(
      'userimport_nostorage',
      () => new EngineError('ExportStorageMissing', 'user export is disabled'),
    );
    expect(tries).to.equal(1);
    expect(error).to.deep.include({
      name: 'InternalError',
      reason: 'UserExportDisabled',
      message: 'user export is disabled',
    });
  });

  it('tries a fault with no code five times at most, then ends the task', async function () {
    this.timeout(30_000);
    const { tries, error } = await runToEnd('userimport_unknown', () => new Error('Connection terminated'));
    expect(tries).to.equal(5);
    expect(error).to.deep.include({ reason: 'UnexpectedError' });
  });

  describe('liveness is progress, not a beating process', () => {
    async function stallingRun(id: string, work: (run: TaskRun) => Promise<void>) {
      await db().query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'import', 'default')`, [id]);
      await db().query(`INSERT INTO task_outbox (task_id, kind, message) VALUES ($1, 'import', '{}')`, [id]);
      await db().query('UPDATE task_outbox SET published_at = clock_timestamp() WHERE task_id = $1', [id]);
      const config = { ...testConfig(await makeTestKeys()), taskStallSeconds: 1 };
      const runner = taskRunner(db(), config, log, new AbortController().signal);
      const stalledBefore = await stalledCount();
      const taken = await runner.take('import', { task_id: id, body: '{}' }, work);
      await taken?.finished;
      const task = await db().query(
        `SELECT t.status, t.owner, t.lapses, o.published_at IS NULL AS offered
           FROM tasks t LEFT JOIN task_outbox o ON o.task_id = t.id WHERE t.id = $1`,
        [id],
      );
      const attempts = await db().query('SELECT outcome FROM task_attempts WHERE task_id = $1', [id]);
      return {
        task: task.rows[0],
        outcomes: attempts.rows.map((r) => r.outcome),
        stalled: (await stalledCount()) - stalledBefore,
      };
    }
    const stalledCount = async () =>
      (await stalledAttempts.get()).values.find((v) => v.labels.kind === 'import')?.value ?? 0;

    it('gives up the lease of an attempt whose await never settles, and offers the task again', async () => {
      const started = Date.now();
      const { task, outcomes, stalled } = await stallingRun('userimport_hung', () => new Promise(() => {}));
      expect(Date.now() - started, 'given up soon after the bound').to.be.below(5_000);
      expect(task).to.deep.equal({ status: 'pending', owner: null, lapses: 1, offered: true });
      expect(outcomes).to.deep.equal(['stalled']);
      expect(stalled).to.equal(1);
      // Ended here, so that the next test's runner does not take it first as a handed-over task.
      await db().query(
        `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE id = $1`,
        ['userimport_hung'],
      );
    });

    it('keeps the lease of an attempt that moves, however long it runs', async () => {
      const { task, outcomes, stalled } = await stallingRun('userimport_moving', async (run) => {
        for (let batch = 0; batch < 10; batch++) {
          await new Promise((resolve) => setTimeout(resolve, 300));
          run.advanced();
        }
        await db().query(
          `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE id = $1`,
          [run.task.id],
        );
      });
      expect(task).to.deep.include({ status: 'completed', lapses: 0 });
      expect(outcomes).to.deep.equal(['completed']);
      expect(stalled).to.equal(0);
    });
  });

  it('takes a task under way that was handed over before the task of the message, whose task waits for the next message', async () => {
    const config = testConfig(await makeTestKeys());
    for (const [id, started] of [
      ['userimport_handedover', 'clock_timestamp()'],
      ['userimport_fresh', 'NULL'],
    ] as const) {
      await db().query(
        `INSERT INTO tasks (id, kind, project_id, started_at, attempt) VALUES ($1, 'import', 'default', ${started}, ${started === 'NULL' ? 0 : 1})`,
        [id],
      );
      await db().query(
        `INSERT INTO task_outbox (task_id, kind, message, published_at) VALUES ($1, 'import', $2, clock_timestamp())`,
        [id, `body of ${id}`],
      );
    }
    const runner = taskRunner(db(), config, log, new AbortController().signal);
    const ran: [string, string][] = [];
    const work = async (run: TaskRun, body: string) => {
      ran.push([run.task.id, body]);
      await db().query(
        `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp() WHERE id = $1`,
        [run.task.id],
      );
    };
    await (
      await runner.take('import', { task_id: 'userimport_fresh', body: 'body of userimport_fresh' }, work)
    )?.finished;
    expect(ran).to.deep.equal([['userimport_handedover', 'body of userimport_handedover']]);
    const fresh = await db().query(`SELECT status, owner FROM tasks WHERE id = 'userimport_fresh'`);
    expect(fresh.rows[0], "the message's own task still waits").to.deep.equal({
      status: 'pending',
      owner: null,
    });
    // The handed-over task's own message, arriving late, wakes a slot that takes the waiting task
    // with its body from the outbox.
    await (await runner.take('import', { task_id: 'userimport_handedover', body: 'a late copy' }, work))
      ?.finished;
    expect(ran[1]).to.deep.equal(['userimport_fresh', 'body of userimport_fresh']);
    expect(
      await runner.take('import', { task_id: 'userimport_fresh', body: 'body of userimport_fresh' }, work),
      'a message whose task was taken by another finds nothing waiting',
    ).to.equal(undefined);
  });
});
