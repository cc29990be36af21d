import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { download, testBlobConnectionString, useExportService } from '../../support/exports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses, waitForProgress } from '../../support/worker-process.js';

const USERS = 150_000;
/** How long the blob store stays down: the fault under test, not a wait for a condition. */
const OUTAGE_MS = 10_000;

/**
 * The real blob store (Azurite) stops while a `make pipeline` worker process writes an export.
 * Within the retry window the export starts again once it is back and the file is whole; an
 * outage beyond the window fails the export with an error that names the blob storage, and gives
 * its UserExport token back.
 */
describe('blob store outage during an export', function () {
  this.timeout(180_000);
  restoreServiceAfter('azurite');
  const service = useExportService('postgres', {
    workers: false,
    settings: { export_rate_limit: 3, export_rate_limit_period_seconds: 86400 },
  });
  const spawnWorker = useWorkerProcesses(service.db.schema);
  const startWorker = (env: Record<string, string> = {}) =>
    spawnWorker({
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: service.config().export.container,
      ...env,
    });

  before(async () => {
    await insertGeneratedUsers(service.db(), USERS, { prefix: 'b', domain: 'outage.test', nameLength: 100 });
  });

  /**
   * Starts a worker with `env` and an ndjson export, stops the blob store for OUTAGE_MS once the
   * export shows progress (after `whileRunning`), and checks the file is whole and the worker alive.
   */
  async function exportThroughOutage(
    env: Record<string, string>,
    whileRunning: (id: string) => Promise<void> = async () => {},
  ): Promise<void> {
    const worker = startWorker(env);
    const res = await service.post({ format: 'ndjson' });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    expect((await waitForProgress(service.db(), id)).processed, 'the export was running').to.be.above(0);
    await whileRunning(id);

    await stopService('azurite');
    await sleep(OUTAGE_MS);
    await startService('azurite');

    const status = await service.waitForCompletion(id);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const lines = (await download(status.download_url as string)).text.split('\n');
    expect(lines).to.have.length(USERS + 1);
    expect(new Set(lines.map((l) => l.slice(0, 60))).size, 'each user once').to.equal(USERS + 1);
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    // Gone before the next test's export is accepted: a draining worker takes no new task, but
    // one that is still up could claim it first.
    worker.kill('SIGTERM');
    await once(worker, 'exit');
  }

  it('stopped for 10 s: the export starts again and the file is whole', async () => {
    await exportThroughOutage({});
  });

  it('stopped for 10 s during a split export: its parts are written again and the file is whole', async () => {
    await exportThroughOutage({ EXPORT_PART_USERS: String(USERS / 3) }, async (id) => {
      const { rows } = await service.db().query('SELECT part FROM export_parts WHERE task_id = $1', [id]);
      expect(rows, 'the export was split').to.have.length(3);
    });
  });

  it('down beyond the retries: fails naming the blob storage, and the token is given back', async () => {
    const worker = spawnWorker(
      {
        AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
        AZURE_STORAGE_CONTAINER: service.config().export.container,
        TASK_RETRY_SECONDS: '1',
      },
      { output: true },
    );
    // Running before the outage: a worker whose start meets a store going down may wait out a
    // request the store accepted and never answered.
    let output = '';
    worker.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await eventually(
      async () => output,
      (text) => text.includes('Pipeline workers running'),
      60,
    );
    await stopService('azurite');
    try {
      // The third and last token of the day.
      const res = await service.post({ format: 'csv' });
      expect(res.statusCode, res.body).to.equal(200);
      const { id } = JSON.parse(res.body) as { id: string };
      const status = await service.waitForCompletion(id);
      expect(status.failed_at).to.be.a('string');
      expect(status.error).to.deep.include({
        name: 'ServiceUnavailable',
        reason: 'DependencyUnavailable',
        info: { dependency: 'blob storage', code: 'ECONNREFUSED' },
      });
    } finally {
      await startService('azurite');
    }
    expect((await service.post({ format: 'csv' })).statusCode, 'the refunded token').to.equal(200);
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    // Gone before the next test's export is accepted: a draining worker takes no new task, but
    // one that is still up could claim it first.
    worker.kill('SIGTERM');
    await once(worker, 'exit');
  });
});
