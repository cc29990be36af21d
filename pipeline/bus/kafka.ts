import { type Consumer, Kafka, logLevel, type Producer } from 'kafkajs';
import { type TaskKind, validateTaskMessage } from '../../schemas/index.js';
import { classifyFault } from '../errors.js';
import type { Logger } from '../log.js';
import type { TaskBus } from './bus.js';

/** How long a stopped consumer waits before it is started again. */
const CONSUMER_RESTART_MS = 3_000;

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
  sessionTimeoutMs = 30_000,
): TaskBus {
  const kafka = new Kafka({
    clientId: `${prefix}users-service`,
    brokers: [...brokers],
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => {
      const fields = { component: 'kafka', ...entry.log };
      if (entry.level <= logLevel.ERROR) log.error(fields, entry.log.message);
      else log.warn(fields, entry.log.message);
    },
  });
  let producer: Producer | undefined;
  const consumers: Consumer[] = [];
  let closing = false;
  const topics = new Map<TaskKind, Promise<void>>();

  /**
   * Creates the kind's topic once and waits for its leaders: a consumer that subscribes to a topic
   * the broker is still auto-creating gets UNKNOWN_TOPIC_OR_PARTITION.
   */
  function ensureTopic(kind: TaskKind): Promise<void> {
    let ready = topics.get(kind);
    if (!ready) {
      ready = (async () => {
        const admin = kafka.admin();
        await admin.connect();
        try {
          await admin.createTopics({
            topics: [{ topic: taskTopic(prefix, kind), numPartitions: 4 }],
            waitForLeaders: true,
          });
        } finally {
          await admin.disconnect();
        }
      })();
      ready.catch(() => topics.delete(kind));
      topics.set(kind, ready);
    }
    return ready;
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
        messages: [{ key: message.task_id, value: JSON.stringify(message) }],
      });
    },
    async subscribe(kind, handler, concurrency = 1) {
      const consumer = kafka.consumer({
        groupId: `${prefix}user-${kind}-workers`,
        allowAutoTopicCreation: true,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.floor(sessionTimeoutMs / 10),
      });
      consumers.push(consumer);
      const start = async () => {
        await ensureTopic(kind);
        await consumer.connect();
        await consumer.subscribe({ topic: taskTopic(prefix, kind), fromBeginning: true });
        await consumer.run({
          // Tasks on different partitions run side by side; one partition's tasks stay in order.
          partitionsConsumedConcurrently: concurrency,
          eachMessage: async ({ message }) => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(message.value?.toString() ?? '');
            } catch {
              parsed = undefined;
            }
            if (!validateTaskMessage(parsed)) {
              log.error({ key: message.key?.toString() }, 'dropping a malformed task message');
              return;
            }
            // A throw here makes kafkajs retry the message (not committing its offset).
            await handler(parsed);
          },
        });
      };
      // kafkajs restarts a consumer that crashed on a retriable error by itself; one that crashed
      // on any other (a broker gone longer than its retries) would stay stopped and leave its
      // partitions' tasks waiting: it is started again here, every few seconds until it runs, for
      // as long as the bus is open.
      const restartLater = () =>
        setTimeout(() => {
          if (closing) return;
          start().catch((err: unknown) => {
            log.warn({ err, kind }, 'task consumer could not start again yet');
            restartLater();
          });
        }, CONSUMER_RESTART_MS);
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart || closing) return;
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
    },
    async close() {
      closing = true;
      await Promise.all(consumers.map((c) => c.disconnect()));
      await producer?.disconnect();
    },
  };
}
