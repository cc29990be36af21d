import type { Kafka } from 'kafkajs';
import { whileWorking } from '../keep-alive.js';
import type { ImportLog, LogOffsets } from './bus.js';
import { heartbeatInterval, MAX_MESSAGE_BYTES, OFFERED_AGAIN, withAdmin } from './kafka-client.js';

/** Where the import log is and how its readers join the brokers. */
export interface KafkaImportLogSettings {
  readonly kafka: Kafka;
  /** The import topic. */
  readonly topic: string;
  /** Makes the topic before it is read. */
  readonly ensureTopic: () => Promise<void>;
  readonly sessionTimeoutMs: number;
}

/** The log of imports on Kafka: the import topic's messages, read by range of offsets for a replay. */
export function kafkaImportLog({
  kafka,
  topic: importTopic,
  ensureTopic,
  sessionTimeoutMs,
}: KafkaImportLogSettings): ImportLog {
  const heartbeatIntervalMs = heartbeatInterval(sessionTimeoutMs);

  /**
   * Reads [from, to) of every partition of the import topic with a consumer group of its own,
   * pausing each partition at its end, until all have reached it.
   */
  async function readRange(
    group: string,
    from: LogOffsets,
    to: LogOffsets,
    onMessage: Parameters<ImportLog['read']>[3],
    signal?: AbortSignal,
  ): Promise<void> {
    const remaining = new Set(
      Object.keys(to).filter((p) => BigInt(from[p] ?? to[p] ?? '0') < BigInt(to[p] ?? '0')),
    );
    if (remaining.size === 0 || signal?.aborted) return;
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs,
      maxBytesPerPartition: MAX_MESSAGE_BYTES,
    });
    let finish: (err?: unknown) => void = () => {};
    const finished = new Promise<void>((resolve, reject) => {
      finish = (err) => (err === undefined ? resolve() : reject(err));
    });
    const onAbort = () => finish();
    signal?.addEventListener('abort', onAbort, { once: true });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) finish(payload.error);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: importTopic, fromBeginning: true });
      await consumer.run({
        autoCommit: true,
        eachMessage: async ({ partition, message, pause, heartbeat }) => {
          const p = String(partition);
          const offset = BigInt(message.offset);
          if (!remaining.has(p) || offset < BigInt(from[p] ?? '0') || signal?.aborted) return;
          if (offset >= BigInt(to[p] ?? '0')) {
            pause();
            return;
          }
          try {
            const logged = {
              partition: p,
              offset: message.offset,
              timestamp: new Date(Number(message.timestamp)),
              body: message.value?.toString() ?? '',
              again: message.headers?.[OFFERED_AGAIN] !== undefined,
            };
            // kafkajs beats only between messages: a reader that waits on its work (a replay
            // creating a task, Postgres slow) must not be dropped from its group meanwhile.
            await whileWorking(heartbeat, heartbeatIntervalMs, () => onMessage(logged));
          } catch (err) {
            finish(err);
            pause();
            return;
          }
          if (offset + 1n >= BigInt(to[p] ?? '0')) {
            remaining.delete(p);
            pause();
            if (remaining.size === 0) finish();
          }
        },
      });
      for (const p of remaining) {
        consumer.seek({ topic: importTopic, partition: Number(p), offset: from[p] ?? '0' });
      }
      await finished;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await consumer.disconnect();
    }
  }

  return {
    async offsetsAt(point) {
      await ensureTopic();
      const offsets =
        'time' in point
          ? await withAdmin(kafka, (a) => a.fetchTopicOffsetsByTimestamp(importTopic, point.time.getTime()))
          : (await withAdmin(kafka, (a) => a.fetchTopicOffsets(importTopic))).map((p) => ({
              partition: p.partition,
              offset: BigInt(point.offset) < BigInt(p.low) ? p.low : BigInt(point.offset).toString(),
            }));
      return Object.fromEntries(offsets.map((p) => [String(p.partition), p.offset]));
    },
    async endOffsets() {
      await ensureTopic();
      const offsets = await withAdmin(kafka, (a) => a.fetchTopicOffsets(importTopic));
      return Object.fromEntries(offsets.map((p) => [String(p.partition), p.high]));
    },
    async count(from, to) {
      // A topic's offsets have no gaps (no transactions, no compaction): the count is the distance.
      let n = 0n;
      for (const [p, end] of Object.entries(to)) {
        const start = BigInt(from[p] ?? end);
        if (BigInt(end) > start) n += BigInt(end) - start;
      }
      return Number(n);
    },
    read: (group, from, to, onMessage, signal) => readRange(group, from, to, onMessage, signal),
  };
}
