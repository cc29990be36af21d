import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaClient } from '../bus/kafka-client.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import { clickhouseUserSearch } from './clickhouse-user-search.js';
import { postgresUserSearch } from './postgres-user-search.js';
import { LIVE_TABLE, openSearchStore, type SearchStore } from './search-store.js';
import {
  ensureUserChangesTopic,
  type Stoppable,
  startSearchSink,
  startUserChangeRelay,
} from './user-change-stream.js';
import type { UserSearchIndex } from './user-search.js';

/** The search index a process answers users(searchKeyword) with, and its ClickHouse store if any. */
export interface SearchIndex {
  /** The index of one project's users. */
  searchOf(projectId: string): UserSearchIndex;
  readonly store: SearchStore | undefined;
  close(): Promise<void>;
}

/** ClickHouse when configured, else Postgres. Opening asks nothing of ClickHouse: it may be down. */
export function openSearchIndex(config: ServiceConfig, pool: Pool): SearchIndex {
  const settings = config.search.clickhouse;
  if (!settings)
    return {
      searchOf: (projectId) => postgresUserSearch(pool, projectId),
      store: undefined,
      close: async () => {},
    };
  const store = openSearchStore(settings);
  return {
    searchOf: (projectId) => clickhouseUserSearch(store, projectId),
    store,
    close: () => store.close(),
  };
}

/** How long the feed waits between attempts to reach ClickHouse or Kafka when it starts. */
const START_RETRY_MS = 2_000;

/**
 * Starts what feeds the ClickHouse index (worker processes): the outbox relay at once, and the
 * sink once the table and the topic exist, retried in the background while ClickHouse or Kafka
 * is unreachable, so that the workers start whatever their state.
 */
export function startSearchFeed(
  config: ServiceConfig,
  pool: Pool,
  store: SearchStore,
  log: Logger,
): Stoppable {
  const prefix = config.kafkaTopicPrefix;
  const kafka = kafkaClient(config.kafkaBrokers, prefix, log, config.kafkaSecurity);
  const relay = startUserChangeRelay(pool, kafka, prefix, log);
  let stopped = false;
  let sink: Stoppable | undefined;
  const starting = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await store.createTable(LIVE_TABLE);
        await ensureUserChangesTopic(kafka, prefix, config.kafkaTopics, log);
        sink = await startSearchSink(pool, kafka, store, config.project.id, prefix, log);
        return;
      } catch (err) {
        if (attempt === 0) log.warn({ err }, 'search sink: cannot start yet; retrying');
        await sleep(START_RETRY_MS);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await starting;
      await sink?.stop();
      await relay.stop();
    },
  };
}
