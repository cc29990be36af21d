import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import {
  applyEvents,
  createWriterRoles,
  exportedUsers,
  followFeed,
  importEndpoints,
  runWriters,
} from '../../support/changes.js';
import { eventually } from '../../support/eventually.js';
import { useExportService } from '../../support/exports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { killOnceStarted, useWorkerProcesses } from '../../support/worker-process.js';

// Enough users that the export is still being written when its worker is killed.
const USERS = 60_000;

/**
 * The change feed's guarantee through faults: the export's worker is SIGKILLed mid-file (another
 * worker writes it again, under a snapshot of its own, and the export names that one's cursor), and
 * Postgres is restarted while a consumer follows the feed and the writers write. The export plus
 * the feed still equals a later export, user for user.
 */
describe('change feed through a worker SIGKILL and a Postgres restart', function () {
  this.timeout(300_000);
  restoreServiceAfter('postgres');
  const service = useExportService('postgres', { workers: false, settings: { trust_proxy: true } });
  const imports = importEndpoints(service.client, service.keys);
  const spawnWorker = useWorkerProcesses(service.db.schema);
  const startWorker = () =>
    spawnWorker({
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: service.config().export.container,
    });

  it('converges: export + feed = a later export', async () => {
    const project = service.config().project.id;
    await createWriterRoles(service.db(), project);
    await insertGeneratedUsers(service.db(), USERS, { prefix: 'u' });

    let stopWriters!: () => void;
    const stop = new Promise<void>((resolve) => {
      stopWriters = resolve;
    });
    // Writes fail while Postgres is down; the writers go on once it is back.
    const writing = runWriters(service.db(), imports, project, stop, () => {});

    const id = await service.start({ format: 'ndjson' });
    const atKill = await killOnceStarted(startWorker, service.db(), id);
    expect(atKill.status, 'the worker was killed mid-export').to.equal('pending');
    const worker = startWorker();
    const exported = await eventually(
      async () => (await service.status(id)).body,
      (status) => status.status === 'completed',
      120,
    );
    expect(exported.failed_at, JSON.stringify(exported.error)).to.equal(undefined);
    expect(exported.changes_cursor).to.be.a('string');

    const following = followFeed(
      service.client(),
      service.keys(),
      exported.changes_cursor as string,
      writing.then(() => {}),
      { retry: true },
    );
    await sleep(500);
    await stopService('postgres');
    await sleep(1_000);
    await startService('postgres');
    await sleep(2_000);
    stopWriters();
    const writes = await writing;
    const events = await following;
    expect(writes.outOfOrder + writes.deletions + writes.roleChanges, 'the writers wrote').to.be.greaterThan(
      3,
    );
    expect(events.length).to.be.greaterThan(0);

    const applied = applyEvents(await exportedUsers(exported), events);
    const fresh = await exportedUsers(
      await service.waitForCompletion(await service.start({ format: 'ndjson' })),
    );
    worker.kill('SIGTERM');
    expect(applied.size, 'as many users').to.equal(fresh.size);
    const differing = [...fresh].filter(
      ([user, record]) => JSON.stringify(applied.get(user)) !== JSON.stringify(record),
    );
    expect(
      differing.map(([user]) => user),
      'users that differ',
    ).to.deep.equal([]);
  });
});
