import { randomBytes } from 'node:crypto';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { startWorkers, type Workers } from '../../pipeline/workers.js';
import { type AdminClient, adminClient, makeTestKeys, type TestKeys, testConfig } from './admin-api.js';
import { useTestSchema } from './database.js';
import { testKafkaBrokers, uniqueTopicPrefix } from './kafka.js';
import { type TaskEndpoints, taskEndpoints, testBus } from './task-endpoints.js';

/** The Azurite started by `make test`. */
export function testBlobConnectionString(): string {
  const value = process.env.TEST_AZURE_STORAGE_CONNECTION_STRING;
  if (!value)
    throw new Error('TEST_AZURE_STORAGE_CONNECTION_STRING is not set: run the tests with `make test`');
  return value;
}

/** A blob container of its own for one describe block, so files are never shared. */
export function uniqueContainer(): string {
  return `t-${randomBytes(6).toString('hex')}`;
}

/** The export service of one describe block: its schema, container, facade, bus and workers. */
export interface ExportService extends TaskEndpoints {
  readonly db: () => Pool;
  readonly client: () => AdminClient;
  readonly config: () => ServiceConfig;
  readonly keys: () => TestKeys;
  /** The container of this service's files (a client of its own, for the tests' checks). */
  readonly blobs: () => BlobStorage;
}

/**
 * A schema, a container in Azurite, a bus on the given transport, the facade and (unless
 * `workers: false`) running workers for the calling describe block. `settings` override the
 * service settings (e.g. `export_download_url_seconds`).
 */
export function useExportService(
  transport: 'kafka' | 'postgres',
  options: { project?: Record<string, unknown>; settings?: Record<string, unknown>; workers?: boolean } = {},
): ExportService {
  const db = useTestSchema();
  const container = uniqueContainer();
  let keys: TestKeys | undefined;
  let config: ServiceConfig | undefined;
  let client: AdminClient | undefined;
  let blobs: BlobStorage | undefined;
  let bus: TaskBus | undefined;
  let workers: Workers | undefined;
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  before(async function () {
    this.timeout(60_000);
    keys = await makeTestKeys();
    const prefix = uniqueTopicPrefix();
    config = testConfig(keys, options.project ?? {}, {
      azure_storage_connection_string: testBlobConnectionString(),
      azure_storage_container: container,
      ...(transport === 'kafka'
        ? { kafka_brokers: testKafkaBrokers().join(','), kafka_topic_prefix: prefix }
        : {}),
      ...options.settings,
    });
    const storage = config.export.blobStorage;
    blobs = config.export.enabled && storage ? await BlobStorage.open(storage, container) : undefined;
    const used = testBus(transport, prefix, db(), log);
    bus = used;
    if (options.workers !== false) workers = await startWorkers(config, db(), used, blobs, log);
    client = adminClient(
      config,
      db,
      keys,
      () => used,
      () => blobs,
    );
  });
  after(async () => {
    await workers?.stop();
    await bus?.close();
  });

  const must = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the export service is not ready yet');
    return value;
  };
  return {
    db,
    client: () => must(client),
    config: () => must(config),
    keys: () => must(keys),
    blobs: () => must(blobs),
    ...taskEndpoints(
      '/_api/admin/users/export',
      () => must(client),
      () => must(keys),
    ),
  };
}

/** Downloads a file through its signed URL: status, headers and body as text. */
export async function download(url: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, text: await res.text() };
}
