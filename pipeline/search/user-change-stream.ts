import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { ensureKafkaTopic, type KafkaTopicSettings } from '../bus/kafka-topics.js';
import type { Pool } from '../db/pool.js';
import { searchDocuments } from '../db/search-documents.js';
import { withTransaction } from '../db/transaction.js';
import { dropUserChanges, takeUserChanges, type UserChange } from '../db/user-changes.js';
import type { Logger } from '../log.js';
import { searchLag } from '../operator/metrics.js';
import { startRelayLoop } from '../relay-loop.js';
import { chString, chStrings } from './clickhouse-sql.js';
import { searchRow } from './search-rows.js';
import { LIVE_TABLE, REINDEX_TABLE, type SearchStore } from './search-store.js';

/** The topic of user changes (keyed by user id, so one user's changes keep their order). */
export const userChangesTopic = (prefix: string) => `${prefix}user-changes`;

/** How often the relay looks at the outbox when nothing pokes it. */
const RELAY_INTERVAL_MS = 250;
/** Changes published per transaction of the relay. */
const RELAY_BATCH = 5_000;
/** How long the sink waits before inserting again into a ClickHouse that refused. */
const SINK_RETRY_MS = 1_000;

export interface Stoppable {
  stop(): Promise<void>;
}

/** Creates the topic of user changes unless it exists. */
export async function ensureUserChangesTopic(
  kafka: Kafka,
  prefix: string,
  settings: KafkaTopicSettings,
  log: Logger,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureKafkaTopic(admin, { topic: userChangesTopic(prefix), configs: {} }, settings, log);
  } finally {
    await admin.disconnect();
  }
}

/**
 * The relay: publishes the `user_changes` outbox to the topic and deletes what it published, in
 * one transaction per batch (a change is published at least once), looking every 250 ms. Faults
 * are logged and retried on the next look.
 */
export function startUserChangeRelay(pool: Pool, kafka: Kafka, prefix: string, log: Logger): Stoppable {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const topic = userChangesTopic(prefix);
  let connected = false;

  const relayOnce = () =>
    withTransaction(pool, async (client) => {
      const changes = await takeUserChanges(client, RELAY_BATCH);
      if (changes.length === 0) return 0;
      await producer.send({
        topic,
        // Keyed by project and user: one user's changes stay in order, a project's burst spreads.
        messages: changes.map((c) => ({ key: `${c.project_id}/${c.user_id}`, value: JSON.stringify(c) })),
      });
      await dropUserChanges(
        client,
        changes.map((c) => c.seq),
      );
      return changes.length;
    });

  const loop = startRelayLoop('user change relay', RELAY_INTERVAL_MS, log, async () => {
    if (!connected) {
      await producer.connect();
      connected = true;
    }
    return (await relayOnce()) === RELAY_BATCH;
  });

  return {
    async stop() {
      await loop.stop();
      await producer.disconnect().catch(() => {});
    },
  };
}

/**
 * The sink: consumes the topic in batches and writes each changed user's current document into
 * the search index (and into the table a reindex is filling, while there is one). ClickHouse being
 * down holds the batch, retried every second, its offsets uncommitted: nothing is lost, and the
 * sink catches up when ClickHouse is back.
 */
export async function startSearchSink(
  pool: Pool,
  kafka: Kafka,
  store: SearchStore,
  projectId: string,
  prefix: string,
  log: Logger,
): Promise<Stoppable> {
  const consumer = kafka.consumer({ groupId: `${prefix}search-sink`, maxBytesPerPartition: 1024 * 1024 });
  let stopped = false;
  await consumer.connect();
  await consumer.subscribe({ topic: userChangesTopic(prefix), fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch, heartbeat, resolveOffset, isRunning }) => {
      const changes = batch.messages.flatMap((m) =>
        m.value ? [JSON.parse(m.value.toString()) as UserChange] : [],
      );
      for (let attempt = 0; ; attempt++) {
        if (stopped || !isRunning()) return;
        try {
          await writeChanges(pool, store, projectId, changes);
          break;
        } catch (err) {
          if (attempt === 0) log.warn({ err }, 'search sink: the index refused a batch; retrying');
          await heartbeat();
          await sleep(SINK_RETRY_MS);
        }
      }
      const now = Date.now();
      for (const c of changes) searchLag.observe((now - Date.parse(c.changed_at)) / 1000);
      const last = batch.messages.at(-1);
      if (last) resolveOffset(last.offset);
      await heartbeat();
    },
  });
  return {
    async stop() {
      stopped = true;
      await consumer.disconnect();
    },
  };
}

/** Reads the changed users' documents and inserts them into the live table and a reindex's. */
async function writeChanges(
  pool: Pool,
  store: SearchStore,
  projectId: string,
  changes: readonly UserChange[],
): Promise<void> {
  if (changes.length === 0) return;
  const docs = await searchDocuments(pool, [...new Set(changes.map((c) => c.user_id))]);
  // Each user under the project its change names; a change from before changes named it is this
  // process's project's.
  const projects = new Map(changes.map((c) => [c.user_id, c.project_id ?? projectId]));
  const values = docs.map((d) => searchRow(projects.get(d.user_id) ?? projectId, d));
  const tables = await (
    await store.client.query({
      query: `SELECT name FROM system.tables
               WHERE database = ${chString(store.database)} AND name IN (${chStrings([LIVE_TABLE, REINDEX_TABLE]).slice(1, -1)})`,
      format: 'JSONEachRow',
    })
  ).json<{ name: string }>();
  for (const { name } of tables) {
    await store.client.insert({ table: store.table(name), values, format: 'JSONEachRow' });
  }
}
