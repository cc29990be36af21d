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

// Every topic prefix this run names, so the run can delete its topics at its end: a broker that
// keeps every test's partitions takes longer to start each time, past its start's wait.
const named = new Set<string>();

/** A topic prefix of its own for one test, so topics and consumer groups are never shared. */
export function uniqueTopicPrefix(): string {
  const prefix = `t${randomBytes(5).toString('hex')}.`;
  named.add(prefix);
  return prefix;
}

/** Deletes the topics of the prefixes this run named (only those: another run may share the broker). */
export async function deleteNamedTopics(): Promise<void> {
  if (named.size === 0 || !process.env.TEST_KAFKA_BROKERS) return;
  const admin = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const prefixes = [...named];
    const topics = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(p)));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 60_000 });
    named.clear();
  } finally {
    await admin.disconnect();
  }
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
