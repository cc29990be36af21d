import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { projectFromDocument, type ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { putProjects } from '../../pipeline/projects/project-admin.js';
import { startPipelineParts } from '../../pipeline/service-parts.js';
import {
  type AdminClient,
  adminClient,
  makeTestKeys,
  TEST_SECRETS,
  type TestKeys,
  testConfig,
} from './admin-api.js';
import { schemaUrl, standbySchemaUrl, useTestSchema } from './database.js';
import { TEST_KAFKA_TOPICS, testKafkaBrokers, uniqueTopicPrefix } from './kafka.js';

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
  /** True: exports read the test Postgres's hot standby (DATABASE_READ_URL). */
  readonly standby?: boolean;
}

/**
 * Sets up, for the calling describe block, a schema and a service on it started as a service
 * process starts one (startPipelineParts): the database, the export storage, the bus on the given
 * transport (Kafka under a topic prefix of its own), the task upkeep, the search index and the
 * workers, with the facade in front; all stopped, in reverse, after the block.
 */
export function useTaskService(
  transport: 'kafka' | 'postgres',
  options: TaskServiceOptions = {},
): TaskService {
  let keys: TestKeys | undefined;
  let config: ServiceConfig | undefined;
  let client: AdminClient | undefined;
  let blobs: BlobStorage | undefined;
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const parts: { name: string; stop: () => Promise<void> }[] = [];

  // Registered before the schema's own hooks, so that it runs first: nothing may still query the
  // schema when it is dropped.
  after(async function () {
    this.timeout(60_000);
    for (const part of parts.reverse()) await part.stop();
  });
  const db = useTestSchema();

  before(async function () {
    this.timeout(60_000);
    keys = await makeTestKeys();
    const prefix = uniqueTopicPrefix();
    config = testConfig(keys, options.project ?? {}, {
      database_url: schemaUrl(db.schema),
      ...(options.standby ? { database_read_url: standbySchemaUrl(db.schema) } : {}),
      migrate_on_start: false,
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
    const service = await startPipelineParts(config, log, (name, stop) => parts.push({ name, stop }), {
      workers: options.workers !== false,
    });
    client = adminClient(
      config,
      db,
      keys,
      service.upkeep.wake,
      () => blobs,
      service.searchOf(config.project.id),
    );
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

/** Puts a project document into the deployment of `service`, as `userctl projects put` puts it. */
export async function putTestProject(service: TaskService, document: Record<string, unknown>): Promise<void> {
  const config = service.config();
  await putProjects(
    {
      pool: service.db(),
      box: TEST_SECRETS,
      read: (doc, name) => projectFromDocument(doc, name, config),
      embedded: true,
    },
    [{ name: `${String(document.id)}.json`, document }],
  );
}
