import kafkajs, { type Consumer, type Producer } from 'kafkajs';
import type { TaskKind } from '../../schemas/index.js';
import type { KafkaSecurity } from '../config.js';
import type { Logger } from '../log.js';
import type { ConsumerLag, TaskBus } from './bus.js';
import { kafkaClient, MAX_MESSAGE_BYTES, OFFERED_AGAIN, taskTopic, withAdmin } from './kafka-client.js';
import { kafkaImportLog } from './kafka-import-log.js';
import { subscribeTasks } from './kafka-task-consumer.js';
import { ensureKafkaTopic, type KafkaTopicSettings } from './kafka-topics.js';

// kafkajs is CommonJS: this one is not seen as a named export by Node's ESM loader.
const { CompressionTypes } = kafkajs;

/** Settings of the Kafka bus beyond its brokers. */
export interface KafkaBusOptions {
  /** How its topics are made (partitions, replicas, min.insync.replicas). */
  readonly topics: KafkaTopicSettings;
  /** How soon a dead consumer's partitions go to another (its messages only wake workers). */
  readonly sessionTimeoutMs?: number;
  /** TLS and SASL to the brokers. */
  readonly security?: KafkaSecurity;
  /** How long the import topic keeps its messages (the reach of a replay); default 7 days. */
  readonly importLogRetentionSeconds?: number;
}

/**
 * The task bus on Kafka: messages keyed by task id, one consumer group per worker kind. A message's
 * offset is committed once its task is claimed (kafka-task-consumer.ts); the import topic is the
 * import log (kafka-import-log.ts).
 */
export function kafkaBus(
  brokers: readonly string[],
  prefix: string,
  log: Logger,
  {
    topics: topicSettings,
    sessionTimeoutMs = 10_000,
    security,
    importLogRetentionSeconds = 7 * 24 * 3600,
  }: KafkaBusOptions,
): TaskBus {
  const kafka = kafkaClient(brokers, prefix, log, security);
  let producer: Producer | undefined;
  const consumers: Consumer[] = [];
  let closing = false;
  const topics = new Map<TaskKind, Promise<void>>();

  /** The import topic keeps its messages for the log's retention; each topic takes a full request. */
  function topicConfigs(kind: TaskKind): Record<string, string> {
    const configs: Record<string, string> = { 'max.message.bytes': String(MAX_MESSAGE_BYTES) };
    if (kind === 'import') configs['retention.ms'] = String(importLogRetentionSeconds * 1000);
    return configs;
  }

  /**
   * Makes the kind's topic once (one that exists is left as it is) and waits for its leaders: a
   * consumer that subscribes to a topic the broker is still auto-creating gets
   * UNKNOWN_TOPIC_OR_PARTITION.
   */
  function ensureTopic(kind: TaskKind): Promise<void> {
    let ready = topics.get(kind);
    if (!ready) {
      ready = withAdmin(kafka, (admin) =>
        ensureKafkaTopic(
          admin,
          { topic: taskTopic(prefix, kind), configs: topicConfigs(kind) },
          topicSettings,
          log,
        ),
      );
      ready.catch(() => topics.delete(kind));
      topics.set(kind, ready);
    }
    return ready;
  }

  /** The consumer group of a kind's workers. */
  const workerGroup = (kind: TaskKind) => `${prefix}user-${kind}-workers`;

  async function connectedProducer(): Promise<Producer> {
    if (!producer) {
      const created = kafka.producer({
        allowAutoTopicCreation: true,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await created.connect();
      producer = created;
    }
    return producer;
  }

  return {
    async publish(message) {
      await ensureTopic(message.kind);
      const p = await connectedProducer();
      await p.send({
        topic: taskTopic(prefix, message.kind),
        acks: -1,
        // An import's message is its request: compressed, the log keeps a fifth of it.
        compression: message.kind === 'import' ? CompressionTypes.GZIP : CompressionTypes.None,
        messages: [
          {
            key: message.key ?? message.task_id,
            value: message.body,
            ...(message.again ? { headers: { [OFFERED_AGAIN]: '1' } } : {}),
          },
        ],
      });
    },
    subscribe: (kind, handler, concurrency = 1) =>
      subscribeTasks(
        {
          kafka,
          kind,
          topic: taskTopic(prefix, kind),
          group: workerGroup(kind),
          sessionTimeoutMs,
          log,
          ensureTopic: () => ensureTopic(kind),
          track: (consumer) => consumers.push(consumer),
          closing: () => closing,
        },
        handler,
        concurrency,
      ),
    check: () => withAdmin(kafka, async (admin) => void (await admin.describeCluster())),
    lag: () =>
      withAdmin(kafka, async (admin) => {
        const lags: ConsumerLag[] = [];
        for (const kind of [...topics.keys()].sort()) {
          const topic = taskTopic(prefix, kind);
          const ends = await admin.fetchTopicOffsets(topic);
          const [committed] = await admin.fetchOffsets({ groupId: workerGroup(kind), topics: [topic] });
          const at = new Map((committed?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
          for (const end of ends) {
            // A partition the group never committed on starts from its earliest message.
            const from = at.get(end.partition) ?? -1n;
            const start = from < 0n ? BigInt(end.low) : from;
            lags.push({ kind, partition: String(end.partition), lag: Number(BigInt(end.high) - start) });
          }
        }
        return lags;
      }),
    importLog: kafkaImportLog({
      kafka,
      topic: taskTopic(prefix, 'import'),
      ensureTopic: () => ensureTopic('import'),
      sessionTimeoutMs,
    }),
    async close() {
      closing = true;
      await Promise.all(consumers.map((c) => c.disconnect()));
      await producer?.disconnect();
    },
  };
}
