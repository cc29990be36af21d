import { expect } from 'chai';
import { BlobStorage } from '../../../pipeline/blob/blob-storage.js';
import { adminClient, adminToken, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { download, kafkaExportWorkerEnv } from '../../support/exports.js';
import { uniqueTopicPrefix } from '../../support/kafka.js';
import { TEST_SIZES } from '../../support/test-sizes.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { killOnceStarted, runToCompletion, useWorkerProcesses } from '../../support/worker-process.js';

// Enough that writing them outlasts several heartbeats (500 ms each), so the kill lands mid-file.
const USERS = TEST_SIZES.killedExportUsers;
// Each line long enough that the file spans several upload blocks: the upload holds the records
// back as it goes, rather than taking the whole file into its first block's buffer at once.
const NAME_LENGTH = 200;

/**
 * A worker killed with SIGKILL in the middle of an export leaves no file: the blob's blocks were
 * staged but never committed. The next worker writes the whole file, then completes the task.
 */
describe('export worker killed mid-export (kafka)', function () {
  this.timeout(120_000);
  const db = useTestSchema();
  const prefix = uniqueTopicPrefix();
  const container = uniqueContainer();
  const spawnWorker = useWorkerProcesses(db.schema);

  const startWorker = () => spawnWorker(kafkaExportWorkerEnv(container, prefix));

  it('leaves no half file, and the next worker writes it whole', async () => {
    await insertGeneratedUsers(db(), USERS, { nameLength: NAME_LENGTH });
    const keys = await makeTestKeys();
    const config = testConfig(
      keys,
      {},
      {
        azure_storage_connection_string: testBlobConnectionString(),
        azure_storage_container: container,
      },
    );
    const blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, container);
    // No upkeep in this process: the worker's own relays the task's message from the outbox.
    const client = adminClient(config, db, keys, undefined, () => blobs);
    const token = await adminToken(keys);
    const res = await client.request({
      method: 'POST',
      url: '/_api/admin/users/export',
      token,
      body: { format: 'csv', csv: { fields: [{ pointer: '/email' }, { pointer: '/name' }] } },
    });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };

    const atKill = await killOnceStarted(startWorker, db(), id);
    expect(atKill.processed, 'the worker was killed while writing').to.be.within(1, USERS - 1);
    expect(atKill.status, 'and before the end').to.equal('pending');
    expect(await blobs.list(), 'no file is visible').to.deep.equal([]);

    const end = await runToCompletion(startWorker, db(), id);
    expect(end).to.deep.equal({ processed: USERS, status: 'completed' });
    expect(await blobs.list()).to.have.length(1);

    const status = await client.request({ method: 'GET', url: `/_api/admin/users/export/${id}`, token });
    const file = await download((JSON.parse(status.body) as { download_url: string }).download_url);
    const lines = file.text.split('\n');
    expect(lines).to.have.length(USERS + 2); // header, one line per user, and the final line end
    const name = 'x'.repeat(NAME_LENGTH);
    expect(lines[0]).to.equal('email,name');
    expect(lines[1]).to.equal(`user1@example.com,${name}`);
    expect(lines[USERS]).to.equal(`user${USERS}@example.com,${name}`);
    expect(lines[USERS + 1]).to.equal('');
  });
});
