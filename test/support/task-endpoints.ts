import type { TaskBus } from '../../pipeline/bus/bus.js';
import { kafkaBus } from '../../pipeline/bus/kafka.js';
import { postgresQueueBus } from '../../pipeline/bus/postgres-queue.js';
import type { Pool } from '../../pipeline/db/pool.js';
import type { Logger } from '../../pipeline/log.js';
import { type AdminClient, adminToken, type TestKeys } from './admin-api.js';
import { eventually } from './eventually.js';
import { TEST_KAFKA_TOPICS, testKafkaBrokers } from './kafka.js';

/** The task bus of a test: real Kafka under its own topic prefix, or the Postgres queue. */
export function testBus(transport: 'kafka' | 'postgres', prefix: string, db: Pool, log: Logger): TaskBus {
  return transport === 'kafka'
    ? kafkaBus(testKafkaBrokers(), prefix, log, { topics: TEST_KAFKA_TOPICS })
    : postgresQueueBus(db, log);
}

/** One task kind's endpoints (decisions 4.1-4.4), called as an admin. */
export interface TaskEndpoints {
  /** POSTs a request (with these headers besides the endpoints' own) and returns the response. */
  post(body: unknown, extraHeaders?: Record<string, string>): ReturnType<AdminClient['request']>;
  /** GETs a task's status. */
  status(id: string): Promise<{ statusCode: number; body: Record<string, unknown> }>;
  /** POSTs a request and returns its task's id; throws unless it was accepted (200). */
  start(body: unknown): Promise<string>;
  /** POSTs a request, waits until its task is completed and returns the final status. */
  run(body: unknown): Promise<Record<string, unknown>>;
  /** Polls a task's status until it is completed, and returns it. */
  waitForCompletion(id: string): Promise<Record<string, unknown>>;
}

/** The endpoints at `path` (e.g. `/_api/admin/users/export`), each call with these headers. */
export function taskEndpoints(
  path: string,
  client: () => AdminClient,
  keys: () => TestKeys,
  headers: Record<string, string> = {},
): TaskEndpoints {
  const endpoints: TaskEndpoints = {
    async post(body, extraHeaders = {}) {
      return client().request({
        method: 'POST',
        url: path,
        token: await adminToken(keys()),
        headers: { ...headers, ...extraHeaders },
        body,
      });
    },
    async status(id) {
      const res = await client().request({
        method: 'GET',
        url: `${path}/${id}`,
        token: await adminToken(keys()),
        headers,
      });
      return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
    },
    async start(body) {
      const res = await endpoints.post(body);
      if (res.statusCode !== 200) throw new Error(`${path} refused: ${res.statusCode} ${res.body}`);
      return (JSON.parse(res.body) as { id: string }).id;
    },
    async run(body) {
      return endpoints.waitForCompletion(await endpoints.start(body));
    },
    async waitForCompletion(id) {
      const last = await eventually(
        async () => (await endpoints.status(id)).body,
        (body) => body.status === 'completed',
      );
      if (last.status === 'completed') return last;
      const { details: _details, ...status } = last;
      throw new Error(`task ${id} did not complete: ${JSON.stringify(status)}`);
    },
  };
  return endpoints;
}
