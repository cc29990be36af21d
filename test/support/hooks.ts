import { TEST_KAFKA_TOPICS } from './kafka.js';
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
  afterAll(): void {
    killLeftoverProcesses();
  },
};
