import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { TaskKind } from '../../schemas/index.js';
import { isTaskId } from '../../schemas/task-id.js';
import { classifyFault } from '../errors.js';
import type { Logger } from '../log.js';
import type { Subscription, TakenTask, TaskBus } from './bus.js';
import { heartbeatInterval, MAX_MESSAGE_BYTES } from './kafka-client.js';

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

/** A kind's task consumer: its topic and group, and what it shares with its bus. */
export interface TaskConsumerSettings {
  readonly kafka: Kafka;
  readonly kind: TaskKind;
  readonly topic: string;
  readonly group: string;
  readonly sessionTimeoutMs: number;
  readonly log: Logger;
  /** Makes the topic before the consumer subscribes. */
  readonly ensureTopic: () => Promise<void>;
  /** Hands the consumer to its bus, which disconnects it on close. */
  readonly track: (consumer: Consumer) => void;
  /** Whether the bus is closing: a consumer that stops then is not started again. */
  readonly closing: () => boolean;
}

/**
 * Runs the kind's tasks from its topic: a message is handed to `handler` in a free slot and its
 * offset committed at once (the task row, not the offset, says who runs it), at most `concurrency`
 * at a time; a slot whose work ended asks `handler` for the next waiting task before it takes
 * messages again.
 */
export async function subscribeTasks(
  { kafka, kind, topic, group, sessionTimeoutMs, log, ensureTopic, track, closing }: TaskConsumerSettings,
  handler: Parameters<TaskBus['subscribe']>[1],
  concurrency: number,
): Promise<Subscription> {
  const heartbeatIntervalMs = heartbeatInterval(sessionTimeoutMs);
  const consumer = kafka.consumer({
    groupId: group,
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
  track(consumer);
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
      if (!taken) idle();
    }
    if (taken) void taken.finished.finally(free);
    const next = (BigInt(message.offset) + 1n).toString();
    // A commit that fails (a rebalance under way) delivers the message again, which finds its
    // task taken: harmless.
    await consumer.commitOffsets([{ topic, partition, offset: next }]).catch((err: unknown) => {
      log.warn({ err, kind, partition }, 'task message offset not committed; it may come again');
    });
  };
  /**
   * A slot's work ended: it takes a message held meanwhile, else the next waiting task without a
   * message (the handler's), and otherwise waits for messages.
   */
  function free(): void {
    busy--;
    if (stopped || closing()) return;
    if (!takeHeld()) takeWaiting();
  }
  /** Takes the first held message in a free slot; false when none is held. */
  function takeHeld(): boolean {
    const next = held.shift();
    if (!next) return false;
    take(next.partition, next.message).then(next.resume, (err: unknown) => {
      // Not claimed (Postgres out of reach): read again from this message.
      log.warn({ err, kind, partition: next.partition }, 'held task message not taken; it comes again');
      consumer.seek({ topic, partition: next.partition, offset: next.message.offset });
      next.resume();
    });
    return true;
  }
  function takeWaiting(): void {
    busy++;
    handler(undefined).then(
      (taken) => {
        if (taken) void taken.finished.finally(free);
        else idle();
      },
      (err: unknown) => {
        log.warn({ err, kind }, 'the next waiting task not taken; the slot waits for messages');
        idle();
      },
    );
  }
  /** The slot found no waiting task: it takes a message held meanwhile, or waits for the next. */
  function idle(): void {
    busy--;
    if (!stopped && !closing()) takeHeld();
  }

  const start = async () => {
    await ensureTopic();
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
      if (closing() || stopped) return;
      start().catch((err: unknown) => {
        log.warn({ err, kind }, 'task consumer could not start again yet');
        restartLater();
      });
    }, CONSUMER_RESTART_MS);
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart || closing() || stopped) return;
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
}
