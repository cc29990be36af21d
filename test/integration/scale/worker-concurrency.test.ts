import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { download, useExportService } from '../../support/exports.js';
import { HTTPS, insertedSummary } from '../../support/imports.js';
import { taskEndpoints } from '../../support/task-endpoints.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

// A worker process runs WORKER_CONCURRENCY tasks of each kind at once (the parts of a split export
// count as export tasks), and its database pool must hold what they need together. On the
// embedded bus every running task also holds its queue row's transaction: a pool sized for less
// makes the tasks wait on each other's connections until the pool's connect timeout fails them,
// again and again.

const CONCURRENCY = 12;
const RECORDS = 40;
const USERS = 3_000;
const PART_USERS = 250; // 12 parts, beside the coordinator: more than the 12 export slots

describe('a worker process at WORKER_CONCURRENCY 12 on the embedded bus', function () {
  this.timeout(120_000);
  const service = useExportService('postgres', { settings: { trust_proxy: true }, workers: false });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);
  const spawnWorker = useWorkerProcesses(service.db.schema);

  before(async () => {
    await insertGeneratedUsers(service.db(), USERS, { domain: 'exported.test' });
  });

  it('runs as many imports and export parts at once as it takes, and completes each', async () => {
    const exportId = await service.start({ format: 'ndjson' });
    const importIds: string[] = [];
    for (let t = 0; t < CONCURRENCY; t++) {
      const records = Array.from({ length: RECORDS }, (_, i) => ({ email: `c${t}-${i}@scale.test` }));
      importIds.push(await imports.start({ identifier: 'email', records }));
    }
    // Every task is queued before the worker starts, so its loops take them all at once.
    const worker = spawnWorker({
      WORKER_CONCURRENCY: String(CONCURRENCY),
      EXPORT_PART_USERS: String(PART_USERS),
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: service.config().export.container,
    });
    try {
      await completesAll(importIds, exportId);
    } finally {
      // Stopped here, not after the block: the schema is dropped first, and a task still running
      // would hold it.
      worker.kill('SIGKILL');
      await new Promise((resolve) => worker.once('exit', resolve));
    }
  });

  async function completesAll(importIds: string[], exportId: string): Promise<void> {
    for (const id of importIds) {
      const status = await imports.waitForCompletion(id);
      expect(status.summary, id).to.deep.equal(insertedSummary(RECORDS));
    }
    const status = await service.waitForCompletion(exportId);
    expect(status.error, 'the export succeeded').to.equal(undefined);
    const file = await download(String(status.download_url));
    const emails = file.text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { email?: string }).email)
      .filter((email) => email?.endsWith('@exported.test'));
    expect(new Set(emails).size, 'every user of the snapshot, once').to.equal(USERS);
    expect(emails).to.have.length(USERS);
  }
});
