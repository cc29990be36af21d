import { once } from 'node:events';
import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { eventually } from '../../support/eventually.js';
import { download, useExportService } from '../../support/exports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses, waitForProgress } from '../../support/worker-process.js';

const USERS = 150_000;

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
  /** A worker process whose log lines (warnings and errors) are collected in `output()`. */
  const startWorker = (env: Record<string, string> = {}) => {
    const worker = spawnWorker(
      {
        AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
        AZURE_STORAGE_CONTAINER: service.config().export.container,
        ...env,
      },
      { output: true },
    );
    let output = '';
    worker.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    return { worker, output: () => output };
  };

  before(async () => {
    await insertGeneratedUsers(service.db(), USERS, { prefix: 'b', domain: 'outage.test', nameLength: 100 });
  });

  /**
   * Starts a worker with `env` and an ndjson export, stops the blob store once the export is
   * under way (`started`: by default it shows progress) and keeps it down until the export has
   * met the outage (`metOutage`), and checks the file is whole and the worker alive.
   */
  async function exportThroughOutage(
    env: Record<string, string>,
    metOutage: (id: string, output: string) => Promise<boolean>,
    started: (id: string) => Promise<void> = async (id) => {
      expect((await waitForProgress(service.db(), id)).processed, 'the export was running').to.be.above(0);
    },
  ): Promise<void> {
    const { worker, output } = startWorker(env);
    // Stopped whatever happens: a worker left running would take the next test's export.
    try {
      await exportMeetsOutage(output, metOutage, started);
      expect(worker.exitCode, 'the worker is still running').to.equal(null);
    } finally {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
  }

  async function exportMeetsOutage(
    output: () => string,
    metOutage: (id: string, output: string) => Promise<boolean>,
    started: (id: string) => Promise<void>,
  ): Promise<void> {
    const res = await service.post({ format: 'ndjson' });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    await started(id);

    await stopService('azurite');
    try {
      const met = await eventually(
        () => metOutage(id, output()),
        (yes) => yes,
        60,
        100,
      );
      expect(met, 'the export met the outage').to.equal(true);
    } finally {
      await startService('azurite');
    }

    const status = await service.waitForCompletion(id);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const lines = (await download(status.download_url as string)).text.split('\n');
    expect(lines).to.have.length(USERS + 1);
    expect(new Set(lines.map((l) => l.slice(0, 60))).size, 'each user once').to.equal(USERS + 1);
  }

  it('stopped until the export meets it: the export starts again and the file is whole', async () => {
    // The worker's try at the export fails on the store and waits to try again.
    await exportThroughOutage({}, async (_id, output) => output.includes('export interrupted; retrying'));
  });

  it('stopped during a split export until a part meets it: its parts are written again and the file is whole', async () => {
    // A part whose write failed on the store is given back and claimed again (its attempt grows).
    const partTriedAgain = async (id: string) => {
      const { rows } = await service
        .db()
        .query<{ n: number }>(
          'SELECT count(*)::int AS n FROM export_parts WHERE task_id = $1 AND attempt > 1',
          [id],
        );
      return (rows[0]?.n ?? 0) > 0;
    };
    // The store stops as soon as the parts are planned (one at a time, while the first is
    // written), before they are staged: a split export can be done before its progress is first
    // written.
    const split = async (id: string) => {
      const parts = await eventually(
        async () =>
          (await service.db().query('SELECT part FROM export_parts WHERE task_id = $1', [id])).rows.length,
        (n) => n >= 3,
        60,
        5,
      );
      expect(parts, 'the export was split').to.equal(3);
    };
    await exportThroughOutage({ EXPORT_PART_USERS: String(USERS / 3) }, partTriedAgain, split);
  });

  it('down beyond the retries: fails naming the blob storage, and the token is given back', async () => {
    const { worker, output } = startWorker({ TASK_RETRY_SECONDS: '1' });
    try {
      // Running before the outage: a worker whose start meets a store going down may wait out a
      // request the store accepted and never answered.
      await eventually(
        async () => output(),
        (text) => text.includes('Pipeline workers running'),
        60,
      );
      await failsThroughOutage();
      expect(worker.exitCode, 'the worker is still running').to.equal(null);
    } finally {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
  });

  async function failsThroughOutage(): Promise<void> {
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
  }
});
