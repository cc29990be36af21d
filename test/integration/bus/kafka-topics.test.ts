import { expect } from 'chai';
import kafkajs, { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { kafkaBus } from '../../../pipeline/bus/kafka.js';
import { taskTopic } from '../../../pipeline/bus/kafka-client.js';
import { exportMessage, importMessage } from '../../../pipeline/bus/task-message.js';
import { testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';

const { ConfigResourceTypes } = kafkajs;

/** The configs and partitions of a topic as the broker holds them. */
async function described(kafka: Kafka, topic: string, names: string[]) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: names }],
    });
    const configs = Object.fromEntries(
      (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
    );
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return { configs, partitions: metadata.topics[0]?.partitions.length };
  } finally {
    await admin.disconnect();
  }
}

describe('kafka topics: made from the settings, an existing one left as it is', function () {
  this.timeout(60_000);
  const kafka = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING });
  const settings = { partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 };

  it('makes each topic with its partitions, replicas, min.insync.replicas and configs', async () => {
    const prefix = uniqueTopicPrefix();
    const bus = kafkaBus(testKafkaBrokers(), prefix, pino({ level: 'silent' }), {
      topics: settings,
      importLogRetentionSeconds: 3 * 24 * 3600,
    });
    try {
      const request = { identifier: 'email', upsert: false, records: [] };
      const body = importMessage('userimport_T', { project_id: 'default', request });
      await bus.publish({ task_id: 'userimport_T', kind: 'import', body });
      const topic = await described(kafka, taskTopic(prefix, 'import'), [
        'min.insync.replicas',
        'retention.ms',
        'max.message.bytes',
      ]);
      expect(topic).to.deep.equal({
        configs: {
          'min.insync.replicas': '1',
          'retention.ms': String(3 * 24 * 3600 * 1000),
          'max.message.bytes': String(4 * 1024 * 1024),
        },
        partitions: 3,
      });
    } finally {
      await bus.close();
    }
  });

  it('reports, and never rewrites, an existing topic whose settings differ', async () => {
    const prefix = uniqueTopicPrefix();
    const topic = taskTopic(prefix, 'export');
    const admin = kafka.admin();
    await admin.connect();
    try {
      // As an operator made and tuned it.
      await admin.createTopics({
        topics: [
          { topic, numPartitions: 2, configEntries: [{ name: 'max.message.bytes', value: '1048576' }] },
        ],
        waitForLeaders: true,
      });
    } finally {
      await admin.disconnect();
    }
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const bus = kafkaBus(testKafkaBrokers(), prefix, log, { topics: settings });
    try {
      await bus.publish({ task_id: 'userexport_T', kind: 'export', body: exportMessage('userexport_T') });
    } finally {
      await bus.close();
    }
    expect(await described(kafka, topic, ['max.message.bytes'])).to.deep.equal({
      configs: { 'max.message.bytes': '1048576' },
      partitions: 2,
    });
    const warning = lines.find((l) => l.msg === 'an existing topic differs from the settings; left as it is');
    expect(warning?.topic).to.equal(topic);
    expect(warning?.differs).to.have.deep.members([
      { name: 'max.message.bytes', set: '1048576', wanted: String(4 * 1024 * 1024) },
      { name: 'partitions', set: '2', wanted: '3' },
    ]);
  });
});
