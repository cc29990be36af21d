import { readFileSync } from 'node:fs';
import kafkajs, {
  type Consumer,
  Kafka,
  type KafkaConfig,
  type KafkaMessage,
  logLevel,
  type Producer,
  type SASLOptions,
} from 'kafkajs';
import type { TaskKind } from '../../schemas/index.js';
import { isTaskId } from '../../schemas/task-id.js';
import type { KafkaSecurity } from '../config.js';
import { classifyFault } from '../errors.js';
import { whileWorking } from '../keep-alive.js';
import type { Logger } from '../log.js';
import type { ConsumerLag, ImportLog, LogOffsets, Subscription, TakenTask, TaskBus } from './bus.js';
import { ensureKafkaTopic, type KafkaTopicSettings } from './kafka-topics.js';

// kafkajs is CommonJS: this one is not seen as a named export by Node's ESM loader.
const { CompressionTypes } = kafkajs;

/**
 * How long a task consumer's fetch waits for messages before it answers empty, and how long it
 * sleeps while all its partitions are paused: short, so that a partition resumed once its held
 * message was taken is read again at once, and a rebalance (learnt between fetches) is quick.
 */
export const FETCH_WAIT_MS = 250;
/** How long a rebalance of the task consumers waits for its members. */
const REBALANCE_TIMEOUT_MS = 60_000;
/** How long a stopped consumer waits before it is started again. */
const CONSUMER_RESTART_MS = 3_000;
/**
 * The largest message: an import request of 500 KB whose secret members, sealed, take about twice
 * their room (the broker's and topic's `max.message.bytes` are set to it, and fetches take it).
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** The header of a task's message offered again (BusMessage.again). */
const OFFERED_AGAIN = 'offered-again';

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
 * A Kafka client of this service (client id under the topic prefix), logging through `log`, with
 * TLS and SASL as configured.
 */
export function kafkaClient(
  brokers: readonly string[],
  prefix: string,
  log: Logger,
  security: KafkaSecurity = {},
): Kafka {
  return new Kafka({
    clientId: `${prefix}users-service`,
    brokers: [...brokers],
    ...securityOptions(security),
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => {
      const fields = { component: 'kafka', ...entry.log };
      if (entry.level <= logLevel.ERROR) log.error(fields, entry.log.message);
      else log.warn(fields, entry.log.message);
    },
  });
}

/** kafkajs's `ssl` and `sasl` options from the settings; the PEM files are read once, here. */
function securityOptions({ ssl, sasl }: KafkaSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const pem = (file: string | undefined) => (file ? readFileSync(file, 'utf8') : undefined);
  return {
    ...(ssl
      ? {
          ssl:
            ssl.caFile || ssl.certFile
              ? {
                  ...(ssl.caFile ? { ca: [pem(ssl.caFile) as string] } : {}),
                  ...(ssl.certFile ? { cert: pem(ssl.certFile), key: pem(ssl.keyFile) } : {}),
                }
              : true,
        }
      : {}),
    // kafkajs types each mechanism apart; the three take the same username and password.
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  };
}

/** Topic of a task kind: one per kind, so that each worker kind scales by its own partitions. */
export function taskTopic(prefix: string, kind: TaskKind): string {
  return `${prefix}user-${kind}`;
}

/**
 * The task bus on Kafka: messages keyed by task id, one consumer group per worker kind. Offsets
 * are committed after the handler resolves (at-least-once); handlers are idempotent.
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
  const heartbeatIntervalMs = Math.floor(sessionTimeoutMs / 10);
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
      ready = withAdmin((admin) =>
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

  /** Runs `use` with a connected admin client. */
  async function withAdmin<T>(use: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await use(admin);
    } finally {
      await admin.disconnect();
    }
  }

  /** The consumer group of a kind's workers. */
  const workerGroup = (kind: TaskKind) => `${prefix}user-${kind}-workers`;

  const importTopic = taskTopic(prefix, 'import');
  const importLog: ImportLog = {
    async offsetsAt(point) {
      await ensureTopic('import');
      const offsets =
        'time' in point
          ? await withAdmin((a) => a.fetchTopicOffsetsByTimestamp(importTopic, point.time.getTime()))
          : (await withAdmin((a) => a.fetchTopicOffsets(importTopic))).map((p) => ({
              partition: p.partition,
              offset: BigInt(point.offset) < BigInt(p.low) ? p.low : BigInt(point.offset).toString(),
            }));
      return Object.fromEntries(offsets.map((p) => [String(p.partition), p.offset]));
    },
    async endOffsets() {
      await ensureTopic('import');
      const offsets = await withAdmin((a) => a.fetchTopicOffsets(importTopic));
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
    async subscribe(kind, handler, concurrency = 1): Promise<Subscription> {
      const topic = taskTopic(prefix, kind);
      const consumer = kafka.consumer({
        groupId: workerGroup(kind),
        allowAutoTopicCreation: true,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: heartbeatIntervalMs,
        // How long a rebalance waits for every member to rejoin: members rejoin between fetches
        // (no handler ever runs a task), so a healthy rebalance ends long before; a short one
        // would expel a member slowed by its machine, and start another rebalance when it returns.
        rebalanceTimeout: REBALANCE_TIMEOUT_MS,
        maxWaitTimeInMs: FETCH_WAIT_MS,
        maxBytesPerPartition: MAX_MESSAGE_BYTES,
      });
      consumers.push(consumer);
      let stopped = false;
      /** Slots running a task, or claiming one. */
      let busy = 0;
      const full = () => busy >= concurrency;
      /**
       * While every slot is busy, a partition whose next message arrives is paused, that message
       * held here (neither claimed nor committed) and taken as soon as a slot frees: at most one
       * per partition of this worker's, which no other worker could read meanwhile anyway. The
       * message handler never waits for a slot, so a rebalance never waits on a task.
       */
      const held: { partition: number; message: KafkaMessage; resume: () => void }[] = [];

      /** The message's task, claimed by the handler; undefined for one that starts nothing. */
      const handOver = async (message: KafkaMessage): Promise<TakenTask | undefined> => {
        // The key is the task id, or starts with it (`<task id>/<part>`).
        const taskId = message.key?.toString().split('/')[0];
        const body = message.value?.toString();
        if (taskId === undefined || !isTaskId(kind, taskId) || body === undefined) {
          log.error({ key: taskId }, 'dropping a malformed task message');
          return undefined;
        }
        return handler({ task_id: taskId, kind, body });
      };
      /**
       * Takes a message in a slot reserved before the claim (so that no other message takes it
       * meanwhile) and commits it; the slot frees when the task's work ends. Throws as the handler
       * does, the message uncommitted.
       */
      const take = async (partition: number, message: KafkaMessage): Promise<void> => {
        busy++;
        let taken: TakenTask | undefined;
        try {
          taken = await handOver(message);
        } finally {
          if (!taken) free();
        }
        if (taken) void taken.finished.finally(free);
        const next = (BigInt(message.offset) + 1n).toString();
        // A commit that fails (a rebalance under way) delivers the message again, which finds its
        // task taken: harmless.
        await consumer.commitOffsets([{ topic, partition, offset: next }]).catch((err: unknown) => {
          log.warn({ err, kind, partition }, 'task message offset not committed; it may come again');
        });
      };
      function free(): void {
        busy--;
        const next = held.shift();
        if (!next || stopped || closing) return;
        take(next.partition, next.message).then(next.resume, (err: unknown) => {
          // Not claimed (Postgres out of reach): read again from this message.
          log.warn({ err, kind, partition: next.partition }, 'held task message not taken; it comes again');
          consumer.seek({ topic, partition: next.partition, offset: next.message.offset });
          next.resume();
        });
      }

      const start = async () => {
        await ensureTopic(kind);
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          // Offsets are committed by hand, each once its message's task is claimed.
          autoCommit: false,
          eachMessage: async ({ partition, message, pause }) => {
            if (full()) held.push({ partition, message, resume: pause() });
            // A throw here leaves the message uncommitted: kafkajs delivers it again.
            else await take(partition, message);
          },
        });
      };
      // kafkajs restarts a consumer that crashed on a retriable error by itself; one that crashed
      // on any other (a broker gone longer than its retries) would stay stopped and leave its
      // partitions' tasks waiting: it is started again here, every few seconds until it runs, for
      // as long as the subscription is open.
      const restartLater = () =>
        setTimeout(() => {
          if (closing || stopped) return;
          start().catch((err: unknown) => {
            log.warn({ err, kind }, 'task consumer could not start again yet');
            restartLater();
          });
        }, CONSUMER_RESTART_MS);
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart || closing || stopped) return;
        log.warn({ err: payload.error, kind }, 'task consumer stopped; starting it again');
        restartLater();
      });
      try {
        await start();
      } catch (err) {
        // A broker that is down while the worker starts: the worker starts anyway and its
        // consumer joins once the broker is back.
        if (classifyFault(err).kind !== 'transient') throw err;
        log.warn({ err, kind }, 'task consumer could not start yet');
        restartLater();
      }
      return {
        async stop() {
          stopped = true;
          await consumer.disconnect();
        },
      };
    },
    check: () => withAdmin(async (admin) => void (await admin.describeCluster())),
    lag: () =>
      withAdmin(async (admin) => {
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
    importLog,
    async close() {
      closing = true;
      await Promise.all(consumers.map((c) => c.disconnect()));
      await producer?.disconnect();
    },
  };
}
