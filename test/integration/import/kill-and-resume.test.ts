import { expect } from 'chai';
import { adminClient, adminToken, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { HTTPS, insertedSummary } from '../../support/imports.js';
import { testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';
import { killOnceStarted, runToCompletion, useWorkerProcesses } from '../../support/worker-process.js';

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

    it('applies every record once and counts it once', async () => {
      const keys = await makeTestKeys();
      const config = testConfig(keys, {}, { trust_proxy: true });
      // No upkeep in this process: the worker's own relays the task's message from the outbox.
      const client = adminClient(config, db, keys);
      const records = Array.from({ length: RECORDS }, (_, i) => ({ email: `k${i}@example.com` }));
      const res = await client.request({
        method: 'POST',
        url: '/_api/admin/users/import',
        token: await adminToken(keys),
        headers: HTTPS,
        body: { identifier: 'email', records },
      });
      expect(res.statusCode, res.body).to.equal(200);
      const { id } = JSON.parse(res.body) as { id: string };

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
    });
  });
}
