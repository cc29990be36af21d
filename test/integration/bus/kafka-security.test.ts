import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generate } from 'selfsigned';
import type { BusMessage } from '../../../pipeline/bus/bus.js';
import { createBus } from '../../../pipeline/bus/create-bus.js';
import { exportMessage } from '../../../pipeline/bus/task-message.js';
import { loadConfig } from '../../../pipeline/config.js';
import { insertTask } from '../../../pipeline/db/tasks/admission.js';
import { createLogger } from '../../../pipeline/log.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { TEST_KAFKA_TOPICS, uniqueTopicPrefix } from '../../support/kafka.js';

const log = createLogger('silent');

/** A setting of the test broker's secured listeners, which `make test` names. */
function testSetting(
  name: 'TEST_KAFKA_SASL_BROKERS' | 'TEST_KAFKA_TLS_BROKERS' | 'TEST_KAFKA_TLS_CA',
): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`make test\``);
  return value;
}

/**
 * A managed Kafka asks for TLS and SASL: the bus configured with KAFKA_SSL_* or KAFKA_SASL_*
 * reaches a real broker's TLS or SASL listener and carries task messages; with a wrong password,
 * or a CA that did not sign the broker's certificate, it is refused, and says why.
 */
describe('task bus on Kafka listeners that ask for TLS or SASL', function () {
  this.timeout(60_000);
  const db = useTestSchema();
  const configWith = (env: Record<string, string>) =>
    loadConfig({
      KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
      KAFKA_PARTITIONS: String(TEST_KAFKA_TOPICS.partitions),
      KAFKA_REPLICATION_FACTOR: String(TEST_KAFKA_TOPICS.replicationFactor),
      KAFKA_MIN_INSYNC_REPLICAS: String(TEST_KAFKA_TOPICS.minInsyncReplicas),
      ...env,
    });
  const sasl = (password: string) =>
    configWith({
      KAFKA_BROKERS: testSetting('TEST_KAFKA_SASL_BROKERS'),
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'users',
      KAFKA_SASL_PASSWORD: password,
    });
  const tls = (caFile: string) =>
    configWith({ KAFKA_BROKERS: testSetting('TEST_KAFKA_TLS_BROKERS'), KAFKA_SSL_CA_FILE: caFile });

  /** Publishes a task message and resolves with the task ids the bus delivered back. */
  async function roundTrip(
    config: ReturnType<typeof loadConfig>,
  ): Promise<{ sent: string; delivered: string[] }> {
    const bus = createBus(config, db(), log);
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
        if (!m) return undefined;
        seen.push(m);
        return undefined;
      });
      await bus.publish({ task_id: id, kind: 'export', body });
      const delivered = await eventually(
        async () => seen.map((m) => m.task_id),
        (ids) => ids.length > 0,
      );
      return { sent: id, delivered };
    } finally {
      await bus.close();
    }
  }

  /** The error the bus's first call meets (undefined: none). */
  async function refusal(config: ReturnType<typeof loadConfig>): Promise<Error | undefined> {
    const bus = createBus(config, db(), log);
    try {
      let refused: Error | undefined;
      await bus.check().catch((err: Error) => (refused = err));
      return refused;
    } finally {
      await bus.close();
    }
  }

  it('SASL: publishes and delivers task messages with the right credentials', async () => {
    const { sent, delivered } = await roundTrip(sasl('users-secret'));
    expect(delivered).to.deep.equal([sent]);
  });

  it('SASL: is refused with a wrong password, naming the authentication', async () => {
    expect((await refusal(sasl('not-the-secret')))?.name).to.equal('KafkaJSSASLAuthenticationError');
  });

  it('TLS: publishes and delivers task messages to a broker whose certificate the CA file signed', async () => {
    const { sent, delivered } = await roundTrip(tls(testSetting('TEST_KAFKA_TLS_CA')));
    expect(delivered).to.deep.equal([sent]);
  });

  it('TLS: refuses a broker whose certificate another CA signed', async () => {
    const elsewhere = path.join(mkdtempSync(path.join(tmpdir(), 'ca-')), 'other-ca.crt');
    const pems = await generate([{ name: 'commonName', value: 'another CA' }], { keySize: 2048 });
    writeFileSync(elsewhere, pems.cert);
    const refused = await refusal(tls(elsewhere));
    expect(refused, 'refused').not.to.equal(undefined);
    expect(JSON.stringify({ name: refused?.name, message: refused?.message })).to.match(
      /certificate|self.signed|verify/i,
    );
  });
});
