import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { download, testBlobConnectionString, useExportService } from '../../support/exports.js';
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
  const startWorker = () =>
    spawnWorker({
      IMPORT_BATCH_SIZE: '10',
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: service.config().export.container,
    });

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
    expect(lines).to.have.length(RECORDS + USERS + 2);
    expect(new Set(lines.slice(1, -1)).size, 'each user once').to.equal(RECORDS + USERS);
    // A second delivery of the task (the queue's lock went with the restart) may still be writing
    // its own blob: it stops at its next heartbeat and discards its blocks. (The container also
    // holds the import's results file.)
    const blobs = await eventually(
      () => service.blobs().list(`${service.config().project.id}-${id}`, { uncommitted: true }),
      (names) => names.length === 1,
    );
    expect(blobs, 'one file, nothing staged').to.have.length(1);
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    worker.kill('SIGTERM');
  });
});
