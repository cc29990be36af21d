import { Readable } from 'node:stream';
import { expect } from 'chai';
import { BlobStorage } from '../../../pipeline/blob/blob-storage.js';
import { deleteUnnamedTaskFiles } from '../../../pipeline/tasks/retention.js';
import { adminClient, adminToken, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { kafkaExportWorkerEnv } from '../../support/exports.js';
import { uniqueTopicPrefix } from '../../support/kafka.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

/**
 * The first completion of a task stalls, then fails: a worker killed during the stall has
 * committed its blob and never named it in its task.
 */
const STALL_FIRST_COMPLETION = `
  CREATE SEQUENCE completions;
  CREATE FUNCTION stall_first_completion() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.file_name IS NOT NULL AND OLD.file_name IS NULL AND nextval('completions') = 1 THEN
      PERFORM pg_sleep(5);
      RAISE EXCEPTION 'the first completion never lands' USING ERRCODE = '57P01';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER stall_first_completion BEFORE UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION stall_first_completion();`;

/** No export file outlives its attempt without a task that names it. */
describe('export files that no task names (kafka)', function () {
  this.timeout(120_000);
  const db = useTestSchema();
  const prefix = uniqueTopicPrefix();
  const container = uniqueContainer();
  const spawnWorker = useWorkerProcesses(db.schema);
  const startWorker = () => spawnWorker(kafkaExportWorkerEnv(container, prefix));
  let blobs: BlobStorage;
  let fileName: string | undefined;

  before(async () => {
    blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, container);
  });

  it('deletes the whole file of a worker killed between committing it and completing its task', async () => {
    await insertGeneratedUsers(db(), 100);
    await db().query(STALL_FIRST_COMPLETION);
    const keys = await makeTestKeys();
    const config = testConfig(
      keys,
      {},
      { azure_storage_connection_string: testBlobConnectionString(), azure_storage_container: container },
    );
    const client = adminClient(config, db, keys, undefined, () => blobs);
    const res = await client.request({
      method: 'POST',
      url: '/_api/admin/users/export',
      token: await adminToken(keys),
      body: { format: 'ndjson' },
    });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };

    const first = startWorker();
    const committed = await eventually(
      () => blobs.list(),
      (names) => names.length === 1,
    );
    expect(committed, 'the first attempt committed its file').to.have.length(1);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    const second = startWorker();
    try {
      const task = await eventually(
        async () =>
          (await db().query<{ status: string; file_name: string }>('SELECT * FROM tasks WHERE id = $1', [id]))
            .rows[0],
        (t) => t?.status === 'completed',
        60,
      );
      fileName = task?.file_name;
      expect(fileName, 'a second attempt completed the task with a file of its own').to.be.a('string');
      expect(fileName).not.to.equal(committed[0]);
      const left = await eventually(
        () => blobs.list(),
        (names) => names.length === 1,
      );
      expect(left, 'the killed attempt’s file is deleted, the task’s kept').to.deep.equal([fileName]);
    } finally {
      second.kill('SIGTERM');
    }
  });

  it('deletes any blob of the project older than the retention that no task names; keeps the task’s file and every blob outside the project', async () => {
    expect(fileName).to.be.a('string');
    const project = String(fileName).split('/')[0] as string;
    expect(fileName, 'the file is under its project’s folder').to.match(
      new RegExp(`^${project}/${project}-`),
    );
    const stray = `${project}/stray.ndjson`;
    // A file from before the folders, and a blob of a project whose id begins with this one's.
    const legacy = `${project}-userexport_${'A'.repeat(32)}-20240101000000Z.ndjson`;
    const elsewhere = 'another-deployment/its-file.ndjson';
    const lookalike = `${project}-userland/${project}-userland-userexport_${'B'.repeat(32)}-20240101000000Z.ndjson`;
    for (const name of [stray, legacy, elsewhere, lookalike]) {
      await blobs.upload(name, Readable.from(['{"email":"x@y.test"}\n']), {
        contentType: 'application/x-ndjson',
        contentDisposition: 'attachment',
      });
    }
    expect(
      await deleteUnnamedTaskFiles(db(), blobs, 3600, [project]),
      'younger than the retention',
    ).to.deep.equal([]);
    expect((await deleteUnnamedTaskFiles(db(), blobs, 0, [project])).sort()).to.deep.equal(
      [legacy, stray].sort(),
    );
    expect((await blobs.list()).sort()).to.deep.equal([elsewhere, fileName, lookalike].sort());
  });
});

/** The container sweep lists a page per turn and goes on from where it stopped. */
describe('the container sweep walks the container a page per turn', () => {
  const db = useTestSchema();

  it('sweeps every unnamed file over several turns, then starts over', async () => {
    const blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, uniqueContainer());
    const upload = (name: string) =>
      blobs.upload(name, Readable.from(['{}\n']), {
        contentType: 'application/x-ndjson',
        contentDisposition: 'attachment',
      });
    // Another deployment's files first in the listing: a sweep that started over each turn would
    // list only them, for ever.
    for (const name of ['another/a.ndjson', 'another/b.ndjson']) await upload(name);
    const strays = Array.from({ length: 5 }, (_, n) => `paged/stray-${n}.ndjson`);
    for (const name of strays) await upload(name);
    const turn = () => deleteUnnamedTaskFiles(db(), blobs, 0, ['paged'], { pageSize: 2 });
    const turns = [await turn(), await turn(), await turn(), await turn()];
    expect(
      turns.map((t) => t.length),
      'a page a turn, from where the last stopped',
    ).to.deep.equal([0, 2, 2, 1]);
    expect(turns.flat().sort()).to.deep.equal(strays);
    expect((await blobs.list()).sort()).to.deep.equal(['another/a.ndjson', 'another/b.ndjson']);
    // Past the last page, the walk starts over from the first.
    await upload('paged/stray-again.ndjson');
    expect([await turn(), await turn()]).to.deep.equal([[], ['paged/stray-again.ndjson']]);
  });
});
