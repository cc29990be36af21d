import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { startWorkers, type Workers } from '../../pipeline/workers.js';
import { type AdminClient, adminClient, makeTestKeys, type TestKeys, testConfig } from './admin-api.js';
import { useTestSchema } from './database.js';
import { testKafkaBrokers, uniqueTopicPrefix } from './kafka.js';
import { type TaskEndpoints, taskEndpoints, testBus } from './task-endpoints.js';

/** Headers of an import call that came through a trusted TLS-terminating proxy. */
export const HTTPS = { 'x-forwarded-proto': 'https' };

/** The import service of one describe block: its schema, the facade, a bus and running workers. */
export interface ImportService extends TaskEndpoints {
  readonly db: () => Pool;
  readonly client: () => AdminClient;
  readonly config: () => ServiceConfig;
  readonly keys: () => TestKeys;
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
    const used = testBus(transport, prefix, db(), log);
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
  return {
    db,
    client: () => must(client),
    config: () => must(config),
    keys: () => must(keys),
    ...taskEndpoints(
      '/_api/admin/users/import',
      () => must(client),
      () => must(keys),
      HTTPS,
    ),
  };
}
