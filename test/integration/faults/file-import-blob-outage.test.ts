import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { eventually } from '../../support/eventually.js';
import { useFileImportService } from '../../support/file-imports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { useWorkerProcesses, waitForProgress } from '../../support/worker-process.js';

const RECORDS = 150_000;

/**
 * The real blob store (Azurite) stops while a `make pipeline` worker process applies a file
 * import read from it: the attempt waits and tries again once the store is back, from its resume
 * point, and every record of the file is applied once.
 */
describe('blob store outage during a file import', function () {
  this.timeout(180_000);
  restoreServiceAfter('azurite');
  const service = useFileImportService({ workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  it('waits out the outage and applies every record once', async () => {
    let text = '';
    for (let i = 0; i < RECORDS; i++) text += `${JSON.stringify({ email: `o${i}@outage.example.com` })}\n`;
    const id = await service.upload(gzipSync(text));
    const task = await service.imports.start({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });

    const worker = spawnWorker(
      {
        AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
        AZURE_STORAGE_CONTAINER: service.config().export.container,
        IMPORT_BATCH_SIZE: '500',
      },
      { output: true },
    );
    let output = '';
    worker.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      expect((await waitForProgress(service.db(), task)).processed, 'applying the file').to.be.above(0);
      await stopService('azurite');
      try {
        // The worker meets the outage only once it has applied what its read had already
        // received (the socket's buffers may hold much of the file): the wait leaves it that time.
        const met = await eventually(
          async () => output.includes('import interrupted; retrying'),
          (yes) => yes,
          600,
          100,
        );
        expect(met, 'the import met the outage').to.equal(true);
      } finally {
        await startService('azurite');
      }
      const status = await service.imports.waitForCompletion(task);
      expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
      expect(status.summary).to.include({ total: RECORDS, inserted: RECORDS, failed: 0 });
      const { rows } = await service.db().query(
        `SELECT count(*)::int AS users, (SELECT count(DISTINCT index)::int FROM import_details WHERE task_id = $1) AS details
           FROM users`,
        [task],
      );
      expect(rows[0]).to.deep.equal({ users: RECORDS, details: RECORDS });
      expect(worker.exitCode, 'the worker is still running').to.equal(null);
    } finally {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
  });
});
