import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../../pipeline/bus/bus.js';
import { kafkaBus } from '../../pipeline/bus/kafka.js';
import { postgresQueueBus } from '../../pipeline/bus/postgres-queue.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { startWorkers, type Workers } from '../../pipeline/workers.js';
import {
  type AdminClient,
  adminClient,
  adminToken,
  makeTestKeys,
  type TestKeys,
  testConfig,
} from './admin-api.js';
import { useTestSchema } from './database.js';
import { testKafkaBrokers, uniqueTopicPrefix } from './kafka.js';

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

export interface ExportService {
  readonly db: () => Pool;
  readonly client: () => AdminClient;
  readonly config: () => ServiceConfig;
  readonly keys: () => TestKeys;
  /** The container of this service's files (a client of its own, for the tests' checks). */
  readonly blobs: () => BlobStorage;
  post(body: unknown): ReturnType<AdminClient['request']>;
  status(id: string): Promise<{ statusCode: number; body: Record<string, unknown> }>;
  /** POSTs an export, waits until it is completed and returns the final status. */
  run(body: unknown): Promise<Record<string, unknown>>;
  waitForCompletion(id: string): Promise<Record<string, unknown>>;
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
    bus = transport === 'kafka' ? kafkaBus(config.kafkaBrokers, prefix, log) : postgresQueueBus(db(), log);
    if (options.workers !== false) workers = await startWorkers(config, db(), bus, blobs, log);
    client = adminClient(
      config,
      db,
      keys,
      () => bus as TaskBus,
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
  const service: ExportService = {
    db,
    client: () => must(client),
    config: () => must(config),
    keys: () => must(keys),
    blobs: () => must(blobs),
    async post(body) {
      return must(client).request({
        method: 'POST',
        url: '/_api/admin/users/export',
        token: await adminToken(must(keys)),
        body,
      });
    },
    async status(id) {
      const res = await must(client).request({
        method: 'GET',
        url: `/_api/admin/users/export/${id}`,
        token: await adminToken(must(keys)),
      });
      return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
    },
    async run(body) {
      const res = await service.post(body);
      if (res.statusCode !== 200) throw new Error(`export refused: ${res.statusCode} ${res.body}`);
      return service.waitForCompletion((JSON.parse(res.body) as { id: string }).id);
    },
    async waitForCompletion(id) {
      for (let i = 0; i < 600; i++) {
        const { body } = await service.status(id);
        if (body.status === 'completed') return body;
        await sleep(50);
      }
      throw new Error(`export ${id} did not complete`);
    },
  };
  return service;
}

/** Downloads a file through its signed URL: status, headers and body as text. */
export async function download(url: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, text: await res.text() };
}
