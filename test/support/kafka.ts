import { randomBytes } from 'node:crypto';

/** The real Kafka broker started by `make test`. */
export function testKafkaBrokers(): string[] {
  const brokers = process.env.TEST_KAFKA_BROKERS;
  if (!brokers) throw new Error('TEST_KAFKA_BROKERS is not set: run the tests with `make test`');
  return brokers.split(',');
}

/**
 * How the tests' topics are made on their single broker: one replica. Set in the environment too,
 * for the service processes the tests start.
 */
export const TEST_KAFKA_TOPICS = { partitions: 4, replicationFactor: 1, minInsyncReplicas: 1 } as const;

/** A topic prefix of its own for one test, so topics and consumer groups are never shared. */
export function uniqueTopicPrefix(): string {
  return `t${randomBytes(5).toString('hex')}.`;
}
