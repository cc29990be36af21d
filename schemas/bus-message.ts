import type { TaskKind } from './index.js';

// The shapes the task bus carries between the facade, the outbox and the workers.

/**
 * A task message as it travels: its task and kind (Kafka: the key and the topic), and its JSON text
 * (`schemas/task-message`), which the bus carries as it is: an import's worker streams its records
 * out of it.
 */
export interface BusMessage {
  readonly task_id: string;
  readonly kind: TaskKind;
  readonly body: string;
  /**
   * What spreads messages over Kafka's partitions when it is not the task id: the parts of one
   * export must reach different workers, not queue behind their task's own message.
   */
  readonly key?: string;
  /**
   * The task's message offered again (its lease lapsed, or its worker released it): not a new
   * request, so a replay of the import log passes over it.
   */
  readonly again?: boolean;
}

/**
 * Positions in the import log: the next offset to read, per partition (Kafka's partitions; the
 * embedded queue is one partition, "0"). Offsets are decimal strings, as Kafka gives them.
 */
export type LogOffsets = Readonly<Record<string, string>>;
