import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { TaskBus } from './bus.js';
import { kafkaBus } from './kafka.js';
import { postgresQueueBus } from './postgres-queue.js';

/** Kafka when brokers are configured; otherwise the embedded Postgres queue. */
export function createBus(config: ServiceConfig, pool: Pool, log: Logger): TaskBus {
  return config.kafkaBrokers.length > 0
    ? kafkaBus(config.kafkaBrokers, config.kafkaTopicPrefix, log, {
        topics: config.kafkaTopics,
        sessionTimeoutMs: config.kafkaSessionTimeoutMs,
        security: config.kafkaSecurity,
        importLogRetentionSeconds: config.importLogRetentionSeconds,
      })
    : postgresQueueBus(pool, log);
}
