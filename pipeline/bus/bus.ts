import type { TaskKind, TaskMessage } from '../../schemas/index.js';

/**
 * Handles one task message. It must be idempotent: every transport delivers at least once, and a
 * message whose handler threw (or whose worker died) is delivered again.
 */
export type TaskHandler = (message: TaskMessage) => Promise<void>;

/** The task bus: "task X of kind K has work to do", from the facade to the pipeline workers. */
export interface TaskBus {
  /** Publishes a message for a task whose row is already committed. */
  publish(message: TaskMessage): Promise<void>;
  /** Handles the messages of one kind, `concurrency` at a time (default 1), until close(). */
  subscribe(kind: TaskKind, handler: TaskHandler, concurrency?: number): Promise<void>;
  /** Stops consuming (after the message in hand) and releases connections. */
  close(): Promise<void>;
}
