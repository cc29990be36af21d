import type { IdempotencyKey, RequestedBy } from '../db/tasks/admission.js';
import type { TaskKey, TaskListPage } from '../db/tasks/task-lists.js';
import type { TaskRow } from '../db/tasks/task-rows.js';

/** Who asks for a task, and the client's key for the request when it sent one. */
export interface TaskRequest {
  readonly requestedBy: RequestedBy;
  readonly idempotency?: IdempotencyKey | undefined;
}

export type { IdempotencyKey, RequestedBy, TaskKey, TaskListPage, TaskRow };
