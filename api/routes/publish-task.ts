import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { deleteTask, type TaskRow } from '../../pipeline/db/tasks.js';
import type { Logger } from '../../pipeline/log.js';

/**
 * Announces a committed task on the bus. When the bus is unreachable the task is deleted, so it
 * never lingers as pending with no message behind it, and false is returned: the caller answers
 * 503 in its own error shape.
 */
export async function publishTask(bus: TaskBus, pool: Pool, log: Logger, task: TaskRow): Promise<boolean> {
  try {
    await bus.publish({ task_id: task.id, kind: task.kind });
    return true;
  } catch (err) {
    log.error({ err, task_id: task.id }, `could not publish the ${task.kind} task`);
    await deleteTask(pool, task.id);
    return false;
  }
}

/** The answer to an initiate call (spec 4.1, 4.3): `{id, created_at, status}`. */
export function createdTask(task: TaskRow): { id: string; created_at: string; status: string } {
  return { id: task.id, created_at: task.created_at.toISOString(), status: task.status };
}
