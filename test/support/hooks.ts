import { deleteNamedContainers } from './blob-containers.js';
import { deleteNamedTopics, TEST_KAFKA_TOPICS } from './kafka.js';
import { killLeftoverProcesses } from './leftover-processes.js';

// The service processes the tests start make their topics on the tests' single broker.
process.env.KAFKA_REPLICATION_FACTOR ??= String(TEST_KAFKA_TOPICS.replicationFactor);
process.env.KAFKA_MIN_INSYNC_REPLICAS ??= String(TEST_KAFKA_TOPICS.minInsyncReplicas);

// Root hooks: integration tests need a real Postgres, which `make test` starts and names here.
export const mochaHooks = {
  beforeAll(): void {
    if (!process.env.TEST_DATABASE_URL) {
      throw new Error('TEST_DATABASE_URL is not set: run the tests with `make test`, which starts Postgres');
    }
  },
  async afterAll(): Promise<void> {
    killLeftoverProcesses();
    // What the run made is taken away; a store that cannot be reached then fails no test.
    const cleaned = await Promise.allSettled([deleteNamedContainers(), deleteNamedTopics()]);
    for (const result of cleaned) {
      if (result.status === 'rejected')
        process.stderr.write(`could not clean up after the tests: ${result.reason}\n`);
    }
  },
};
