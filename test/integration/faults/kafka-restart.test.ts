import { expect } from 'chai';
import { useImportService } from '../../support/imports.js';
import { testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { useWorkerProcesses, waitForProgress } from '../../support/worker-process.js';

const RECORDS = 12_000;

/**
 * The real Kafka broker is stopped and started again while a `make pipeline` worker process runs
 * an import, and a second import is requested while it is down. The worker and the facade outlive
 * it; the running import completes, and the one accepted during the outage waits in the outbox
 * and is published once the broker is back.
 */
describe('Kafka broker restarted during an import', function () {
  this.timeout(240_000);
  restoreServiceAfter('kafka');
  const prefix = uniqueTopicPrefix();
  // The facade alone in this process (no workers); the worker process consumes.
  const service = useImportService('kafka', {}, { kafka_topic_prefix: prefix }, { workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  it('completes the running import and the one accepted during the outage', async () => {
    const worker = spawnWorker({
      IMPORT_BATCH_SIZE: '10',
      KAFKA_BROKERS: testKafkaBrokers().join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
    });
    const emails = Array.from({ length: RECORDS }, (_, i) => `k${i}@restart.test`);
    const first = await service.post({ identifier: 'email', records: emails.map((email) => ({ email })) });
    expect(first.statusCode, first.body).to.equal(200);
    const firstId = (JSON.parse(first.body) as { id: string }).id;
    const progress = await waitForProgress(service.db(), firstId);
    expect(progress.processed, 'the import was running').to.be.above(0);

    await stopService('kafka');
    const second = await service.post({ identifier: 'email', records: [{ email: 'during@restart.test' }] });
    expect(second.statusCode, 'accepted while the broker is down').to.equal(200);
    const secondId = (JSON.parse(second.body) as { id: string }).id;
    await startService('kafka');

    const firstStatus = await service.waitForCompletion(firstId);
    expect(firstStatus.failed_at, JSON.stringify(firstStatus.error)).to.equal(undefined);
    expect(firstStatus.summary).to.deep.include({ total: RECORDS, inserted: RECORDS, failed: 0 });
    const secondStatus = await service.waitForCompletion(secondId);
    expect(secondStatus.summary).to.deep.include({ total: 1, inserted: 1 });
    const { rows } = await service.db().query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    expect(rows).to.deep.equal([{ n: RECORDS + 1 }]);
    expect(worker.exitCode, 'the worker is still running').to.equal(null);
    worker.kill('SIGTERM');
  });
});
