import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { BlobServiceClient } from '@azure/storage-blob';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { BlobStorage } from '../../../pipeline/blob/blob-storage.js';
import type { Pool } from '../../../pipeline/db/pool.js';
import { withSnapshot } from '../../../pipeline/db/transaction.js';
import { exportFields } from '../../../pipeline/export/pointers.js';
import { prepareSnapshot } from '../../../pipeline/export/user-rows.js';
import { snapshotSettings, writeRecords } from '../../../pipeline/export/write-records.js';
import type { ExportTaskOptions } from '../../../schemas/index.js';
import { adminClient, adminToken, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { kafkaExportWorkerEnv, useExportService } from '../../support/exports.js';
import { testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';
import { insertGeneratedUsers } from '../../support/users.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

// Issue: export at the speed of reading the data. An export of more users than EXPORT_PART_USERS
// is split into ranges that the workers of the consumer group write into one blob, under the
// snapshot of the worker that took the task; the file is the one a single worker writes.

const USERS = 150_000;
const TIED = 3_000; // users created at one instant: a range may end inside them
const PART_USERS = 30_000;
const NAME_LENGTH = 600;
const ISSUER = 'http://localhost:3000'; // no generated user has a TOTP: the issuer is not written

/** Which worker holds which part, as the export_parts rows show it while the export runs. */
interface PartRow {
  part: number;
  coordinator: string;
  claimed_by: string | null;
  attempt: number;
  processed: number;
  block_ids: string[] | null;
}

/** The file one worker writes for these options: the unsplit path, into memory. */
async function oneWorkerFile(db: Pool, options: ExportTaskOptions): Promise<Buffer> {
  return withSnapshot(db, async (conn) => {
    const settings = snapshotSettings(options);
    await prepareSnapshot(conn, 'default', settings);
    const chunks: Buffer[] = [];
    await writeRecords(conn, settings, options, {
      totpIssuer: ISSUER,
      header: true,
      progress: () => {},
      signal: new AbortController().signal,
      sink: async (file) => {
        for await (const chunk of file) chunks.push(chunk as Buffer);
      },
    });
    return Buffer.concat(chunks);
  });
}

describe('split export over two worker processes (kafka)', function () {
  this.timeout(180_000);
  const db = useTestSchema();
  const prefix = uniqueTopicPrefix();
  const container = uniqueContainer();
  const spawnWorker = useWorkerProcesses(db.schema);
  let blobs: BlobStorage;
  let client: ReturnType<typeof adminClient>;
  let token: string;
  let workers: ChildProcess[] = [];

  const startWorker = () =>
    spawnWorker({ ...kafkaExportWorkerEnv(container, prefix), EXPORT_PART_USERS: String(PART_USERS) });

  before(async () => {
    // Names long enough that a part spans several blocks and is written over several of its
    // progress reports: a worker can be seen, and killed, in the middle of one.
    await insertGeneratedUsers(db(), USERS, { nameLength: NAME_LENGTH });
    await db().query(
      `INSERT INTO users (id, project_id, created_at, standard_attributes, custom_attributes)
       SELECT gen_random_uuid(), 'default', '2026-01-01T00:00:30Z', jsonb_build_object('email', 'tied' || n || '@example.com'),
              jsonb_build_object('n', n)
         FROM generate_series(1, $1) n`,
      [TIED],
    );
    const keys = await makeTestKeys();
    const config = testConfig(
      keys,
      {},
      { azure_storage_connection_string: testBlobConnectionString(), azure_storage_container: container },
    );
    blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, container);
    client = adminClient(config, db, keys, undefined, () => blobs);
    token = await adminToken(keys);
    workers = [startWorker(), startWorker()];
    await groupOfTwo();
  });

  /** Both members have joined and the group is balanced, before an export is asked for. */
  async function groupOfTwo(): Promise<void> {
    const admin = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await eventually(
        async () => (await admin.describeGroups([`${prefix}user-export-workers`])).groups[0],
        (g) => g?.state === 'Stable' && g.members.length === 2,
        90,
      );
    } finally {
      await admin.disconnect();
    }
  }

  async function postExport(body: Record<string, unknown>): Promise<string> {
    const res = await client.request({ method: 'POST', url: '/_api/admin/users/export', token, body });
    expect(res.statusCode, res.body).to.equal(200);
    return (JSON.parse(res.body) as { id: string }).id;
  }

  /** Polls the task's parts until it completes; every row seen on the way. */
  async function watchParts(id: string, onRows?: (rows: PartRow[]) => void): Promise<PartRow[]> {
    const seen: PartRow[] = [];
    for (let i = 0; i < 6000; i++) {
      const { rows } = await db().query<PartRow>(
        'SELECT part, coordinator, claimed_by, attempt, processed, block_ids FROM export_parts WHERE task_id = $1',
        [id],
      );
      seen.push(...rows);
      onRows?.(rows);
      const { rows: task } = await db().query<{ status: string; error: unknown }>(
        'SELECT status, error FROM tasks WHERE id = $1',
        [id],
      );
      if (task[0]?.status === 'completed') {
        expect(task[0].error, 'the export succeeded').to.equal(null);
        return seen;
      }
      await sleep(20);
    }
    throw new Error('the export did not complete');
  }

  async function fileOf(id: string): Promise<Buffer> {
    const { rows } = await db().query<{ file_name: string }>('SELECT file_name FROM tasks WHERE id = $1', [
      id,
    ]);
    const res = await fetch(blobs.readUrl(rows[0]?.file_name as string, 60));
    expect(res.status).to.equal(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('two workers write the file one worker writes: CSV with one header, and gzip', async () => {
    const csv = {
      format: 'csv',
      csv: { fields: [{ pointer: '/sub' }, { pointer: '/email' }, { pointer: '/custom_attributes/n' }] },
    };
    const id = await postExport(csv);
    const seen = await watchParts(id);
    expect(new Set(seen.map((r) => r.part)).size, 'every part was planned').to.equal(
      Math.ceil((USERS + TIED) / PART_USERS),
    );
    const file = await fileOf(id);
    const expected = await oneWorkerFile(db(), {
      format: 'csv',
      fields: exportFields(
        [{ pointer: '/sub' }, { pointer: '/email' }, { pointer: '/custom_attributes/n' }],
        [],
      ),
    });
    expect(file.toString().split('\n')).to.have.length(USERS + TIED + 2);
    expect(file.equals(expected), 'the same bytes as one worker writes').to.equal(true);
    expect(await db().query('SELECT 1 FROM export_parts WHERE task_id = $1', [id])).to.have.property(
      'rowCount',
      0,
    );

    const gzipped = await postExport({ format: 'ndjson', compression: 'gzip' });
    seen.push(...(await watchParts(gzipped)));
    const ndjson = await oneWorkerFile(db(), { format: 'ndjson', fields: [] });
    expect(
      gunzipSync(await fileOf(gzipped)).equals(ndjson),
      'the gzip members hold the one-worker file',
    ).to.equal(true);
    // Which worker takes a part is a race (the coordinator writes every part nobody else took
    // first): over the two exports' twelve parts, the second worker must have taken some.
    expect(new Set(seen.map((r) => r.claimed_by).filter(Boolean)).size, 'both workers wrote parts').to.equal(
      2,
    );
  });

  it('a worker killed in the middle of its range hands the range over: no user lost or doubled', async () => {
    let killed: { worker: string; part: number } | undefined;
    let id = '';
    let seen: PartRow[] = [];
    const retriedOf = (rows: PartRow[]) =>
      rows.filter((r) => r.part === killed?.part && r.attempt >= 2 && r.claimed_by !== killed?.worker);
    // Whether a helper is seen in the middle of a part is a race (under a loaded suite the
    // coordinator may write every part, or the helper stage its part before the kill lands):
    // exports are asked for, with a new helper after a kill that came too late, until one gives
    // the chance.
    for (let tries = 0; tries < 4 && !(killed && retriedOf(seen).length > 0); tries++) {
      if (killed) {
        workers = workers.map((w) => (w.exitCode === null && w.signalCode === null ? w : startWorker()));
        await groupOfTwo();
        killed = undefined;
      }
      id = await postExport({ format: 'ndjson' });
      seen = await watchParts(id, (rows) => {
        if (killed) return;
        // A part in the middle of being written by a worker that is not the coordinator.
        const row = rows.find(
          (r) =>
            r.claimed_by !== null &&
            r.claimed_by !== r.coordinator &&
            r.processed > 0 &&
            r.block_ids === null,
        );
        const helper = row && workers.find((w) => row.claimed_by?.endsWith(`:${w.pid}`));
        if (row && helper) {
          helper.kill('SIGKILL');
          killed = { worker: row.claimed_by as string, part: row.part };
        }
      });
    }
    expect(killed, 'a helper was killed mid-part').to.not.equal(undefined);
    expect(retriedOf(seen), 'another worker wrote the killed range again').to.not.be.empty;
    const file = await fileOf(id);
    const expected = await oneWorkerFile(db(), { format: 'ndjson', fields: [] });
    const subs = file
      .toString()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as { sub: string }).sub);
    expect(new Set(subs).size, 'no user doubled').to.equal(subs.length);
    expect(subs).to.have.length(USERS + TIED);
    expect(file.equals(expected), 'the same bytes as one worker writes').to.equal(true);
  });
});

describe('split export written by one in-process worker (postgres queue)', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { settings: { export_part_users: 4_000 } });

  before(async () => {
    await insertGeneratedUsers(service.db(), 10_000, { nameLength: 20 });
  });

  for (const body of [
    { format: 'csv', csv: { fields: [{ pointer: '/sub' }, { pointer: '/name' }] } },
    { format: 'ndjson', compression: 'gzip' },
  ] as const)
    it(`writes every part itself when no other worker helps: ${body.format}`, async () => {
      const res = await service.post(body);
      expect(res.statusCode, res.body).to.equal(200);
      const { id } = JSON.parse(res.body) as { id: string };
      const status = await service.waitForCompletion(id);
      expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
      const file = Buffer.from(await (await fetch(status.download_url as string)).arrayBuffer());
      const expected = await oneWorkerFile(service.db(), {
        format: body.format,
        fields: body.format === 'csv' ? exportFields(body.csv.fields, []) : [],
      });
      expect((body.format === 'ndjson' ? gunzipSync(file) : file).equals(expected)).to.equal(true);
      // Written by parts, the file is digested whole all the same.
      expect(status).to.deep.include({
        record_count: 10_000,
        file_bytes: file.length,
        file_sha256: createHash('sha256').update(file).digest('hex'),
      });
      const { rowCount } = await service.db().query('SELECT 1 FROM export_parts WHERE task_id = $1', [id]);
      expect(rowCount, 'its parts are forgotten').to.equal(0);
      // The blob is the three parts' blocks, committed in part order.
      const { rows } = await service
        .db()
        .query<{ file_name: string }>('SELECT file_name FROM tasks WHERE id = $1', [id]);
      const blob = BlobServiceClient.fromConnectionString(testBlobConnectionString())
        .getContainerClient(service.config().export.container)
        .getBlockBlobClient(rows[0]?.file_name as string);
      const { committedBlocks = [] } = await blob.getBlockList('committed');
      const parts = committedBlocks.map((b) => Buffer.from(b.name, 'base64').toString().slice(0, 6));
      expect(parts).to.deep.equal(['000000', '000001', '000002']);
      // Each part was offered to every worker on the queue, as a message of its own.
      const offered = await service
        .db()
        .query<{ processed: boolean }>(
          'SELECT processed_at IS NOT NULL AS processed FROM task_queue WHERE task_id = $1 AND message_key <> task_id',
          [id],
        );
      expect(offered.rows.map((r) => r.processed)).to.deep.equal([true, true, true]);
    });
});
