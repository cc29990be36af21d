import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { eventually } from '../../support/eventually.js';
import { insertedSummary, useImportService } from '../../support/imports.js';
import { testKafkaBrokers } from '../../support/kafka.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

const TASKS = 16;
const RECORDS = 50;

/** The ids of the tasks a worker process logged as completed. */
function completedBy(worker: ChildProcess): () => string[] {
  let output = '';
  worker.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return () =>
    output
      .split('\n')
      .filter((l) => l.includes('"import completed"'))
      .map((l) => (JSON.parse(l) as { task_id: string }).task_id);
}

describe('two `make pipeline` workers in one Kafka consumer group', function () {
  this.timeout(180_000);
  const service = useImportService('kafka', {}, {}, { workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  it('share the import partitions, and every task is applied once', async () => {
    const prefix = service.config().kafkaTopicPrefix;
    const env = {
      KAFKA_BROKERS: testKafkaBrokers().join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      LOG_LEVEL: 'info',
    };
    const workers = [spawnWorker(env, { output: true }), spawnWorker(env, { output: true })];
    const logs = workers.map(completedBy);

    // Both members have joined and the group is balanced before any task is sent.
    const admin = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const group = await eventually(
        async () => (await admin.describeGroups([`${prefix}user-import-workers`])).groups[0],
        (g) => g?.state === 'Stable' && g.members.length === 2,
        90,
      );
      expect(group?.members).to.have.length(2);
    } finally {
      await admin.disconnect();
    }

    const ids: string[] = [];
    for (let t = 0; t < TASKS; t++) {
      const records = Array.from({ length: RECORDS }, (_, i) => ({ email: `w${t}-${i}@scale.test` }));
      ids.push(await service.start({ identifier: 'email', records }));
    }
    for (const id of ids) {
      const status = await service.waitForCompletion(id);
      expect(status.summary).to.deep.equal(insertedSummary(RECORDS));
    }
    const [first, second] = await eventually(
      async () => logs.map((read) => read()),
      (all) => all.flat().length >= TASKS,
      30,
    );
    expect(first, 'the first worker ran tasks').to.have.length.greaterThan(0);
    expect(second, 'the second worker ran tasks').to.have.length.greaterThan(0);
    expect([...(first ?? []), ...(second ?? [])].sort()).to.deep.equal([...ids].sort()); // each once
    const { rows } = await service.db().query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    expect(rows[0]?.n).to.equal(TASKS * RECORDS);
  });
});
