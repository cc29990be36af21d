import { once } from 'node:events';
import { expect } from 'chai';
import { adminClient, adminToken, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { HTTPS, insertedSummary } from '../../support/imports.js';
import { testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';
import {
  killOnceStarted,
  runToCompletion,
  taskProgress,
  useWorkerProcesses,
  waitForProgress,
} from '../../support/worker-process.js';

const RECORDS = 3000;
const BATCH = 25;

/**
 * A worker killed with SIGKILL in the middle of an import resumes, in the next worker, from its
 * last committed batch: every record is applied exactly once and counted once.
 */
for (const transport of ['postgres', 'kafka'] as const) {
  describe(`import worker killed mid-task resumes (${transport})`, function () {
    this.timeout(120_000);
    const db = useTestSchema();
    const prefix = uniqueTopicPrefix();
    const spawnWorker = useWorkerProcesses(db.schema);

    const startWorker = () =>
      spawnWorker({
        IMPORT_BATCH_SIZE: String(BATCH),
        ...(transport === 'kafka'
          ? {
              KAFKA_BROKERS: testKafkaBrokers().join(','),
              KAFKA_TOPIC_PREFIX: prefix,
              KAFKA_SESSION_TIMEOUT_MS: '6000',
            }
          : {}),
      });

    /** Accepts an import of RECORDS users named by `tag`; its task id. */
    async function startImport(tag: string): Promise<string> {
      const keys = await makeTestKeys();
      const config = testConfig(keys, {}, { trust_proxy: true });
      // No upkeep in this process: the worker's own relays the task's message from the outbox.
      const client = adminClient(config, db, keys);
      const records = Array.from({ length: RECORDS }, (_, i) => ({ email: `${tag}${i}@example.com` }));
      const res = await client.request({
        method: 'POST',
        url: '/_api/admin/users/import',
        token: await adminToken(keys),
        headers: HTTPS,
        body: { identifier: 'email', records },
      });
      expect(res.statusCode, res.body).to.equal(200);
      return (JSON.parse(res.body) as { id: string }).id;
    }

    /** The task's attempts in order: who, how each ended, and whether it began after the last ended. */
    async function attemptsOf(id: string) {
      const { rows } = await db().query<{ outcome: string; after_previous: boolean | null }>(
        `SELECT outcome, claimed_at >= lag(ended_at) OVER (ORDER BY attempt) AS after_previous
           FROM task_attempts WHERE task_id = $1 ORDER BY attempt`,
        [id],
      );
      return rows;
    }

    it('applies every record once and counts it once', async () => {
      const id = await startImport('k');

      const atKill = await killOnceStarted(startWorker, db(), id);
      expect(atKill.processed, 'the worker was killed after some batches').to.be.greaterThan(0);
      expect(atKill.status, 'and before the end').to.equal('pending');

      const end = await runToCompletion(startWorker, db(), id);
      expect(end.status).to.equal('completed');

      const { rows } = await db().query(
        `SELECT t.summary,
                (SELECT count(*)::int FROM import_details d WHERE d.task_id = t.id) AS details,
                (SELECT count(DISTINCT index)::int FROM import_details d WHERE d.task_id = t.id) AS indexes,
                (SELECT count(*)::int FROM users) AS users,
                (SELECT count(*)::int FROM identities) AS identities
           FROM tasks t WHERE t.id = $1`,
        [id],
      );
      expect(rows[0]).to.deep.equal({
        summary: insertedSummary(RECORDS),
        details: RECORDS,
        indexes: RECORDS,
        users: RECORDS,
        identities: RECORDS,
      });
      // The killed attempt's lease lapsed before the next began: never two at once.
      expect(await attemptsOf(id)).to.deep.equal([
        { outcome: 'lapsed', after_previous: null },
        { outcome: 'completed', after_previous: true },
      ]);
    });

    it('a worker stopped with SIGTERM finishes its batch, hands the task over and exits 0', async () => {
      const id = await startImport('t');
      const worker = startWorker();
      const started = await waitForProgress(db(), id);
      expect(started.processed, 'the worker had begun').to.be.greaterThan(0);
      worker.kill('SIGTERM');
      const [code] = await once(worker, 'exit');
      expect(code, 'a clean drain').to.equal(0);
      const handedOver = await taskProgress(db(), id);
      expect(handedOver.status, 'stopped before the end').to.equal('pending');
      expect(handedOver.processed % BATCH, 'at the end of a batch').to.equal(0);
      expect(await attemptsOf(id)).to.deep.equal([{ outcome: 'released', after_previous: null }]);

      const end = await runToCompletion(startWorker, db(), id);
      expect(end.status).to.equal('completed');
      const { rows } = await db().query(
        `SELECT t.summary, (SELECT count(DISTINCT index)::int FROM import_details d WHERE d.task_id = t.id) AS indexes
           FROM tasks t WHERE t.id = $1`,
        [id],
      );
      expect(rows[0]).to.deep.equal({ summary: insertedSummary(RECORDS), indexes: RECORDS });
      expect(await attemptsOf(id)).to.deep.equal([
        { outcome: 'released', after_previous: null },
        { outcome: 'completed', after_previous: true },
      ]);
    });
  });
}
