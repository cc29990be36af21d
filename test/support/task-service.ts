import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { openSearchIndex, type SearchIndex, startSearchFeed } from '../../pipeline/search/search-index.js';
import { startTaskUpkeep, type TaskUpkeep } from '../../pipeline/tasks/task-upkeep.js';
import { pipelineWorkers, type Workers, workerConnections } from '../../pipeline/workers.js';
import { DEFAULT_WORKER_CONCURRENCY } from '../../schemas/config.schema.js';
import {
  type AdminClient,
  adminClient,
  makeTestKeys,
  TEST_SECRETS,
  type TestKeys,
  testConfig,
} from './admin-api.js';
import { TEST_CONNECTIONS, useTestSchema } from './database.js';
import { TEST_KAFKA_TOPICS, testKafkaBrokers, uniqueTopicPrefix } from './kafka.js';
import { testBus } from './task-endpoints.js';

/** The parts of one describe block's service: schema, config, facade, bus, upkeep and workers. */
export interface TaskService {
  readonly db: (() => Pool) & { readonly schema: string };
  readonly client: () => AdminClient;
  readonly config: () => ServiceConfig;
  readonly keys: () => TestKeys;
  /** The export files' container (a client of its own, for the tests' checks); undefined without one. */
  readonly storage: () => BlobStorage | undefined;
}

/** How a describe block's service is set up. */
export interface TaskServiceOptions {
  readonly project?: Record<string, unknown>;
  /** Service settings over the test defaults (e.g. `export_download_url_seconds`). */
  readonly settings?: Record<string, unknown>;
  /** False: no workers run, so tasks stay pending (the upkeep still relays their messages). */
  readonly workers?: boolean;
}

/**
 * Sets up, for the calling describe block, a schema, a bus on the given transport (Kafka under a
 * topic prefix of its own), the task upkeep, the workers and the facade, as a service process
 * does; all stopped after the block.
 */
export function useTaskService(
  transport: 'kafka' | 'postgres',
  options: TaskServiceOptions = {},
): TaskService {
  let keys: TestKeys | undefined;
  let config: ServiceConfig | undefined;
  let client: AdminClient | undefined;
  let blobs: BlobStorage | undefined;
  let bus: TaskBus | undefined;
  let upkeep: TaskUpkeep | undefined;
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  // Registered before the schema's own hooks, so that it runs first: nothing may still query the
  // schema when it is dropped.
  let index: SearchIndex | undefined;
  let feed: { stop(): Promise<void> } | undefined;
  let workers: Workers | undefined;
  after(async () => {
    await feed?.stop();
    await workers?.stop();
    await index?.close();
    await upkeep?.stop();
    await bus?.close();
  });
  // One pool for the facade, the upkeep and the workers, as in a service process.
  const concurrency = Number(options.settings?.worker_concurrency ?? DEFAULT_WORKER_CONCURRENCY);
  const workerPool = options.workers === false ? 0 : workerConnections(concurrency);
  const db = useTestSchema(TEST_CONNECTIONS + workerPool);

  before(async function () {
    this.timeout(60_000);
    keys = await makeTestKeys();
    const prefix = uniqueTopicPrefix();
    config = testConfig(keys, options.project ?? {}, {
      ...(transport === 'kafka'
        ? {
            kafka_brokers: testKafkaBrokers().join(','),
            kafka_topic_prefix: prefix,
            kafka_partitions: TEST_KAFKA_TOPICS.partitions,
            kafka_replication_factor: TEST_KAFKA_TOPICS.replicationFactor,
            kafka_min_insync_replicas: TEST_KAFKA_TOPICS.minInsyncReplicas,
          }
        : {}),
      ...options.settings,
    });
    const storage = config.export.blobStorage;
    blobs =
      config.export.enabled && storage ? await BlobStorage.open(storage, config.export.container) : undefined;
    bus = testBus(transport, config.kafkaTopicPrefix, db(), log);
    upkeep = startTaskUpkeep(db(), bus, blobs, config, log);
    if (options.workers !== false) {
      workers = pipelineWorkers({ config, pool: db(), bus, blobs, secrets: TEST_SECRETS, log });
      await workers.start();
    }
    index = openSearchIndex(config, db());
    if (index.store && options.workers !== false) feed = startSearchFeed(config, db(), index.store, log);
    const started = upkeep;
    const search = index.search;
    client = adminClient(config, db, keys, started.wake, () => blobs, search);
  });
  const must = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the service is not ready yet');
    return value;
  };
  return {
    db,
    client: () => must(client),
    config: () => must(config),
    keys: () => must(keys),
    storage: () => blobs,
  };
}
