import { expect } from 'chai';
import { releaseReader, takeReader } from '../../../pipeline/db/export-readers.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { eventually } from '../../support/eventually.js';
import { download, useExportService } from '../../support/exports.js';
import { insertGeneratedUsers } from '../../support/users.js';

// EXPORT_READERS_MAX: the exports of the whole deployment read with at most that many connections
// at once; the coordinator of an export takes a reader before its snapshot, and waits for one.

describe('export readers of the deployment', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { settings: { export_readers_max: 1 } });

  before(async () => {
    await insertGeneratedUsers(service.db(), 1_000);
  });

  /**
   * A task of another worker for a reader to belong to (of a kind the project's one running export
   * does not count, so that the service takes the test's exports).
   */
  async function otherTask(): Promise<string> {
    const id = newTaskId('import');
    await service.db().query(
      `INSERT INTO tasks (id, kind, project_id, owner, attempt, lease_until)
         VALUES ($1, 'import', 'default', 'elsewhere', 1, clock_timestamp() + interval '1 minute')`,
      [id],
    );
    return id;
  }

  const attemptOf = async (id: string) =>
    (await service.db().query<{ attempt: number }>('SELECT attempt FROM tasks WHERE id = $1', [id])).rows[0]
      ?.attempt ?? 0;

  const take = (taskId: string, holder: string, readersMax: number, leaseMs = 60_000) =>
    takeReader(service.db(), { taskId, holder, leaseMs, readersMax });

  it('are taken up to the cap; a released or lapsed one frees its place', async () => {
    const [a, b, c] = [await otherTask(), await otherTask(), await otherTask()];
    expect(await take(a, 'w1', 2)).to.equal(true);
    expect(await take(b, 'w2', 2)).to.equal(true);
    expect(await take(c, 'w3', 2), 'the cap reached').to.equal(false);
    await releaseReader(service.db(), { taskId: a, holder: 'w1' });
    expect(await take(c, 'w3', 2), 'a released reader').to.equal(true);
    await service
      .db()
      .query(`UPDATE export_readers SET lease_until = clock_timestamp() - interval '1 second'`);
    expect(await take(a, 'w1', 1), 'every lease lapsed').to.equal(true);
    await service.db().query('DELETE FROM export_readers');
  });

  it('make an export wait for its turn before it takes its snapshot', async () => {
    // Another worker's export holds the one reader of the deployment.
    const other = await otherTask();
    expect(await take(other, 'elsewhere', 1)).to.equal(true);
    const id = await service.start({ format: 'ndjson' });
    // Taken by the worker, it goes as far as the reader and no further: its snapshot would count
    // its users at once, and in a second it has not.
    await eventually(
      () => attemptOf(id),
      (attempt) => attempt >= 1,
      10,
    );
    const body = await eventually(
      async () => (await service.status(id)).body,
      (b) => b.status !== 'pending' || (b.progress as { total: number }).total > 0,
      1,
    );
    expect(body.status, 'waiting for a reader').to.equal('pending');
    expect(body.progress, 'nothing read').to.deep.equal({ processed: 0, total: 0 });
    await releaseReader(service.db(), { taskId: other, holder: 'elsewhere' });
    const status = await service.waitForCompletion(id);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const { text } = await download(status.download_url as string);
    expect(text.split('\n').filter((l) => l !== '')).to.have.length(1_000);
    const { rowCount } = await service.db().query('SELECT 1 FROM export_readers');
    expect(rowCount, 'its reader given back').to.equal(0);
  });
});
