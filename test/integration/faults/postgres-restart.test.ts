import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { eventually } from '../../support/eventually.js';
import { download, useExportService } from '../../support/exports.js';
import { HTTPS, insertedSummary } from '../../support/imports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { taskEndpoints } from '../../support/task-endpoints.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses, waitForProgress } from '../../support/worker-process.js';

const RECORDS = 12_000;
const USERS = 120_000;

/**
 * The real Postgres is stopped and started again while a `make pipeline` worker process runs an
 * import, then an export. The worker and the facade outlive it: the facade answers 503 with
 * Retry-After meanwhile, the import resumes from its last committed batch, the export starts
 * again, and each task completes with exactly what was asked.
 */
describe('Postgres restarted during an import and an export', function () {
  this.timeout(180_000);
  restoreServiceAfter('postgres');
  const service = useExportService('postgres', { workers: false, settings: { trust_proxy: true } });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);
  const spawnWorker = useWorkerProcesses(service.db.schema);
  const startWorker = (env: Record<string, string> = {}) =>
    spawnWorker({
      IMPORT_BATCH_SIZE: '10',
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: service.config().export.container,
      ...env,
    });

  /**
   * Restarts Postgres as soon as `stage` (a query) finds a row: the moment a task of the run
   * reaches that stage of its life. Resolves with whether the stage was met before `done` was.
   */
  async function restartAt(stage: string, done: () => Promise<boolean>): Promise<boolean> {
    for (;;) {
      const { rows } = await service.db().query(stage);
      if (rows.length > 0) break;
      if (await done()) return false;
    }
    await stopService('postgres');
    await startService('postgres');
    return true;
  }

  it('import: resumes once the database is back; every user applied once', async () => {
    const worker = startWorker();
    const emails = Array.from({ length: RECORDS }, (_, i) => `r${i}@restart.test`);
    const res = await imports.post({ identifier: 'email', records: emails.map((email) => ({ email })) });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    const before = (await waitForProgress(service.db(), id)).processed;
    expect(before, 'the import was running').to.be.above(0);

    await stopService('postgres');
    const during = await imports.status(id);
    expect(during.statusCode).to.equal(503);
    expect(during.body.error).to.deep.include({ name: 'ServiceUnavailable', reason: 'ServiceUnavailable' });
    await startService('postgres');

    const status = await imports.waitForCompletion(id);
    expect(before, 'the restart came in the middle').to.be.below(RECORDS);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    expect(status.summary).to.deep.equal(insertedSummary(RECORDS));
    const { rows } = await service
      .db()
      .query<{ email: string }>(`SELECT standard_attributes->>'email' AS email FROM users ORDER BY 1`);
    expect(rows.map((r) => r.email)).to.deep.equal([...emails].sort());
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    worker.kill('SIGTERM');
  });

  it('imports: a restart while a results file is written, and one at a completion; every task completed once', async function () {
    this.timeout(300_000);
    const worker = startWorker({ IMPORT_BATCH_SIZE: '500', TASK_STALL_SECONDS: '20' });
    const TASKS = 20;
    const PER_TASK = 1_000;
    // Records with a long name: each task's results file takes a while to read out and upload.
    const name = 'n'.repeat(300);
    const ids: string[] = [];
    for (let t = 0; t < TASKS; t++) {
      const records = Array.from({ length: PER_TASK }, (_, i) => ({ email: `t${t}-${i}@stages.test`, name }));
      ids.push(await imports.start({ identifier: 'email', records }));
    }
    const allDone = async () => {
      const { rows } = await service
        .db()
        .query(`SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'pending'`, [ids]);
      return rows[0]?.n === 0;
    };
    // The results file's ledger row is written just before its lines are read out into the blob.
    const whileResultsFile = await restartAt(
      `SELECT 1 FROM task_blobs b JOIN tasks t ON t.id = b.task_id
        WHERE t.id = ANY('{${ids.join(',')}}') AND t.status = 'pending'`,
      allDone,
    );
    const atCompletion = await restartAt(
      `SELECT 1 FROM tasks WHERE id = ANY('{${ids.join(',')}}') AND status = 'completed'
          AND completed_at > clock_timestamp() - interval '20 milliseconds'`,
      allDone,
    );
    console.log(`      restarts met: results file ${whileResultsFile}, completion ${atCompletion}`);
    expect(whileResultsFile || atCompletion, 'a restart met a task on its way').to.equal(true);

    for (const id of ids) {
      const status = await imports.waitForCompletion(id);
      expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
      expect(status.summary).to.deep.equal(insertedSummary(PER_TASK));
      expect(status.results_url, 'its results file').to.be.a('string');
    }
    const { rows } = await service.db().query<{ n: number; completed: number }>(
      `SELECT count(*)::int AS n,
              (SELECT count(*)::int FROM task_attempts WHERE task_id = ANY($1) AND outcome = 'completed') AS completed
         FROM users WHERE standard_attributes->>'email' LIKE '%@stages.test'`,
      [ids],
    );
    expect(rows[0]).to.deep.equal({ n: TASKS * PER_TASK, completed: TASKS });
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    worker.kill('SIGTERM');
  });

  it('export: starts again once the database is back; the file is whole', async () => {
    await insertGeneratedUsers(service.db(), USERS, {
      prefix: 'e',
      domain: 'restart.test',
      since: '2027-01-01',
    });
    const worker = startWorker();
    const res = await service.post({ format: 'csv', csv: { fields: [{ pointer: '/email' }] } });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    expect((await waitForProgress(service.db(), id)).processed, 'the export was running').to.be.above(0);

    await stopService('postgres');
    expect((await service.status(id)).statusCode).to.equal(503);
    await startService('postgres');

    const status = await service.waitForCompletion(id);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const file = await download(status.download_url as string);
    const lines = file.text.split('\n');
    // Every user of the schema: the generated ones and those the imports above applied.
    const users = (await service.db().query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]
      ?.n;
    expect(users).to.be.above(RECORDS + USERS);
    expect(lines).to.have.length((users ?? 0) + 2);
    expect(new Set(lines.slice(1, -1)).size, 'each user once').to.equal(users);
    // A second delivery of the task (the queue's lock went with the restart) may still be writing
    // its own blob: it stops at its next heartbeat and discards its blocks. (The container also
    // holds the import's results file.)
    const blobs = await eventually(
      () => {
        const project = service.config().project.id;
        return service.blobs().list(`${project}/${project}-${id}`, { uncommitted: true });
      },
      (names) => names.length === 1,
    );
    expect(blobs, 'one file, nothing staged').to.have.length(1);
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    worker.kill('SIGTERM');
  });
});
