import { setTimeout as sleep } from 'node:timers/promises';
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

/** Headers of an import call that came through a trusted TLS-terminating proxy. */
export const HTTPS = { 'x-forwarded-proto': 'https' };

/** The import service of one describe block: its schema, the facade, a bus and running workers. */
export interface ImportService {
  readonly db: () => Pool;
  readonly client: () => AdminClient;
  readonly config: () => ServiceConfig;
  readonly keys: () => TestKeys;
  /** POSTs an import request and returns the response. */
  post(body: unknown): ReturnType<AdminClient['request']>;
  /** GETs an import task's status. */
  status(id: string): Promise<{ statusCode: number; body: Record<string, unknown> }>;
  /** POSTs an import and waits until its task is completed; returns the final status. */
  run(body: unknown): Promise<Record<string, unknown>>;
}

/** Sets up a schema, a bus on the given transport and the workers for the calling describe block. */
export function useImportService(
  transport: 'kafka' | 'postgres',
  project: Record<string, unknown> = {},
  settings: Record<string, unknown> = {},
): ImportService {
  const db = useTestSchema();
  let keys: TestKeys | undefined;
  let config: ServiceConfig | undefined;
  let client: AdminClient | undefined;
  let workers: Workers | undefined;
  let bus: TaskBus | undefined;
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  before(async function () {
    this.timeout(60_000);
    keys = await makeTestKeys();
    const prefix = uniqueTopicPrefix();
    config = testConfig(keys, project, {
      trust_proxy: true,
      ...(transport === 'kafka'
        ? { kafka_brokers: testKafkaBrokers().join(','), kafka_topic_prefix: prefix }
        : {}),
      ...settings,
    });
    const used =
      transport === 'kafka' ? kafkaBus(config.kafkaBrokers, prefix, log) : postgresQueueBus(db(), log);
    bus = used;
    workers = await startWorkers(config, db(), used, undefined, log);
    client = adminClient(config, db, keys, () => used);
  });
  after(async () => {
    await workers?.stop();
    await bus?.close();
  });

  const must = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the import service is not ready yet');
    return value;
  };
  const service: ImportService = {
    db,
    client: () => must(client),
    config: () => must(config),
    keys: () => must(keys),
    async post(body) {
      return must(client).request({
        method: 'POST',
        url: '/_api/admin/users/import',
        token: await adminToken(must(keys)),
        headers: HTTPS,
        body,
      });
    },
    async status(id) {
      const res = await must(client).request({
        method: 'GET',
        url: `/_api/admin/users/import/${id}`,
        token: await adminToken(must(keys)),
        headers: HTTPS,
      });
      return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
    },
    async run(body) {
      const res = await service.post(body);
      if (res.statusCode !== 200) throw new Error(`import refused: ${res.statusCode} ${res.body}`);
      const { id } = JSON.parse(res.body) as { id: string };
      for (let attempt = 0; attempt < 600; attempt++) {
        const { body: status } = await service.status(id);
        if (status.status === 'completed') return status;
        await sleep(50);
      }
      throw new Error(`import ${id} did not complete`);
    },
  };
  return service;
}
