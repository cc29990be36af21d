import { expect } from 'chai';
import type { BusMessage } from '../../../pipeline/bus/bus.js';
import { createBus } from '../../../pipeline/bus/create-bus.js';
import { exportMessage } from '../../../pipeline/bus/task-message.js';
import { loadConfig } from '../../../pipeline/config.js';
import { insertTask } from '../../../pipeline/db/tasks.js';
import { createLogger } from '../../../pipeline/log.js';
import { newTaskId } from '../../../pipeline/tasks/task-id.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { TEST_KAFKA_TOPICS, uniqueTopicPrefix } from '../../support/kafka.js';

const log = createLogger('silent');

/** The SASL listener of the test broker (PLAIN; the user its JAAS configuration names). */
function saslBrokers(): string {
  const brokers = process.env.TEST_KAFKA_SASL_BROKERS;
  if (!brokers) throw new Error('TEST_KAFKA_SASL_BROKERS is not set: run the tests with `make test`');
  return brokers;
}

/**
 * A managed Kafka asks for SASL: the bus configured with KAFKA_SASL_* reaches a real broker's SASL
 * listener and carries task messages; with a wrong password it is refused, and says so.
 */
describe('task bus on a Kafka listener that asks for SASL', function () {
  this.timeout(60_000);
  const db = useTestSchema();
  const configWith = (password: string) =>
    loadConfig({
      KAFKA_BROKERS: saslBrokers(),
      KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
      KAFKA_PARTITIONS: String(TEST_KAFKA_TOPICS.partitions),
      KAFKA_REPLICATION_FACTOR: String(TEST_KAFKA_TOPICS.replicationFactor),
      KAFKA_MIN_INSYNC_REPLICAS: String(TEST_KAFKA_TOPICS.minInsyncReplicas),
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'users',
      KAFKA_SASL_PASSWORD: password,
    });

  it('publishes and delivers task messages with the right credentials', async () => {
    const bus = createBus(configWith('users-secret'), db(), log);
    try {
      await bus.check();
      const id = newTaskId('export');
      const body = exportMessage(id);
      await insertTask(db(), {
        id,
        project: 'default',
        kind: 'export',
        message: body,
        options: {},
        total: 0,
      });
      const seen: BusMessage[] = [];
      await bus.subscribe('export', async (m) => {
        seen.push(m);
        return undefined;
      });
      await bus.publish({ task_id: id, kind: 'export', body });
      const delivered = await eventually(
        async () => seen.map((m) => m.task_id),
        (ids) => ids.length > 0,
      );
      expect(delivered).to.deep.equal([id]);
    } finally {
      await bus.close();
    }
  });

  it('is refused with a wrong password, naming the authentication', async () => {
    const bus = createBus(configWith('not-the-secret'), db(), log);
    try {
      let refused: unknown;
      await bus.check().catch((err) => (refused = err));
      expect((refused as Error | undefined)?.name).to.equal('KafkaJSSASLAuthenticationError');
    } finally {
      await bus.close();
    }
  });
});
