import { expect } from 'chai';
import { EngineError } from '../../../pipeline/errors.js';
import { createLogger } from '../../../pipeline/log.js';
import { taskRunner } from '../../../pipeline/tasks/run-task.js';
import { makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

describe('tasks/run-task: retries and the failure that ends a task', () => {
  const db = useTestSchema();
  const log = createLogger('silent');

  async function runToEnd(id: string, fail: () => Error): Promise<{ tries: number; error: unknown }> {
    await db().query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'import', 'default')`, [id]);
    const config = testConfig(await makeTestKeys(), {}, { task_retry_seconds: 300 });
    const runner = taskRunner(db(), config, log, new AbortController().signal);
    let tries = 0;
    const taken = await runner.take('import', id, async () => {
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
});
