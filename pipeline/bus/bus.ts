import type { BusMessage, LogOffsets } from '../../schemas/bus-message.js';
import type { TaskKind } from '../../schemas/index.js';

export type { BusMessage, LogOffsets };

/** The work a taken message started, which runs on after the message is committed. */
export interface TakenTask {
  /** Settles (never rejects) when the work has ended, and its slot is free. */
  readonly finished: Promise<void>;
}

/**
 * Takes one task message: decides quickly whether it starts work (claims a task) and resolves
 * with that work, or undefined when there is nothing to run; the message is committed then. A
 * throw leaves the message to be delivered again. It must be idempotent: every transport delivers
 * at least once. Called without a message by a slot whose work just ended, which takes the next
 * waiting task (if any) before it waits for messages again: a task passed over while its project
 * ran its bound of tasks may have no message left to wake a slot.
 */
export type TaskHandler = (message: BusMessage | undefined) => Promise<TakenTask | undefined>;

/** A kind's consumer in this process. */
export interface Subscription {
  /** Takes no more messages; the work already taken runs on. */
  stop(): Promise<void>;
}

/** The task bus: "task X of kind K has work to do", from the facade to the pipeline workers. */
export interface TaskBus {
  /** Publishes a message for a task whose row is already committed. */
  publish(message: BusMessage): Promise<void>;
  /**
   * Hands the messages of one kind to `handler`, with at most `concurrency` (default 1) taken tasks
   * running at once: while they are, the kind's partitions are paused, so that no message waits in
   * this process that another could take.
   */
  subscribe(kind: TaskKind, handler: TaskHandler, concurrency?: number): Promise<Subscription>;
  /** Resolves when the bus answers (Kafka: a broker describes the cluster). */
  check(): Promise<void>;
  /** The import messages as a log that can be read again (for a replay). */
  readonly importLog: ImportLog;
  /**
   * Messages of each kind not yet handled by its workers, per partition: the consumer lag an
   * autoscaler scales the workers on.
   */
  lag(): Promise<ConsumerLag[]>;
  /** Stops every subscription and releases connections. */
  close(): Promise<void>;
}

/** The messages of a kind's partition that its workers have not handled yet. */
export interface ConsumerLag {
  readonly kind: TaskKind;
  readonly partition: string;
  readonly lag: number;
}

/** Where a replay starts or stops: a time (the first message at or after it) or an offset. */
export type LogPoint = { readonly time: Date } | { readonly offset: string };

/** One message read back from the import log, with its place and the time it was logged. */
export interface LoggedMessage {
  readonly partition: string;
  readonly offset: string;
  readonly timestamp: Date;
  readonly body: string;
  /** A message offered again (BusMessage.again). */
  readonly again: boolean;
}

/** The import topic read as a log, from a point, up to offsets taken in advance. */
export interface ImportLog {
  /** Per partition, the offset of the first message at or after the point (the end if none). */
  offsetsAt(point: LogPoint): Promise<LogOffsets>;
  /** Per partition, the offset the next logged message will have. */
  endOffsets(): Promise<LogOffsets>;
  /** How many messages lie in [from, to). */
  count(from: LogOffsets, to: LogOffsets): Promise<number>;
  /**
   * Reads the messages from `from` up to (not including) `to`, in order within a partition, one
   * at a time; resolves once every partition reached `to`. `group` names the reader (Kafka: its
   * consumer group). A throw of `onMessage` ends the read with it.
   */
  read(
    group: string,
    from: LogOffsets,
    to: LogOffsets,
    onMessage: (message: LoggedMessage) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<void>;
}
