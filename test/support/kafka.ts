import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { eventually } from './eventually.js';

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

/** A consumer group as the broker describes it: its state and how many members it has. */
export async function describeGroup(group: string): Promise<{ state: string; members: number }> {
  const admin = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const [described] = (await admin.describeGroups([group])).groups;
    return { state: described?.state ?? 'Dead', members: described?.members.length ?? 0 };
  } finally {
    await admin.disconnect();
  }
}

/** Waits until the group is stable with `members` members (a rebalance has ended around them). */
export async function groupSettled(group: string, members: number): Promise<void> {
  const seen = await eventually(
    () => describeGroup(group),
    (g) => g.state === 'Stable' && g.members === members,
    60,
    100,
  );
  expect(seen, `consumer group ${group}`).to.deep.equal({ state: 'Stable', members });
}
