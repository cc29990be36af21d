import type { TaskRow } from '../../pipeline/services/task-requests.js';

/**
 * The members every task status shows (decisions 2.1, 2.3 and docs/decisions.md): id, created_at, status;
 * `replay_of` for a replayed import; `idempotency_key` when the request carried one (a client's
 * name for its request: userctl's and the console's name their run and the request's place in it);
 * `progress` while pending; then `completed_at`, and `failed_at` with `error` when the task could
 * not finish. Absent values are omitted, never null. Each kind adds its own results.
 */
export function taskStatus(task: TaskRow): Record<string, unknown> {
  const status: Record<string, unknown> = {
    id: task.id,
    created_at: task.created_at.toISOString(),
    status: task.status,
  };
  if (task.replay_of) status.replay_of = task.replay_of;
  if (task.idempotency_key) status.idempotency_key = task.idempotency_key;
  if (task.status === 'pending') {
    status.progress = {
      processed: task.progress_processed,
      total: task.progress_total,
      ...(task.source_bytes === null ? {} : fileProgress(task)),
    };
    return status;
  }
  if (task.completed_at) status.completed_at = task.completed_at.toISOString();
  if (task.failed_at) status.failed_at = task.failed_at.toISOString();
  if (task.error) status.error = task.error;
  return status;
}

/**
 * A file import's progress beyond its records: bytes of the upload read (taken in) of its size,
 * and once records apply, their rate since the task started and the seconds left at that rate.
 * The total is 0 until the whole file is taken in.
 */
function fileProgress(task: TaskRow): Record<string, number> {
  const progress: Record<string, number> = {
    bytes_read: Number(task.source_bytes_read ?? 0),
    bytes_total: Number(task.source_bytes),
  };
  const seconds = task.started_at ? (Date.now() - task.started_at.getTime()) / 1000 : 0;
  if (seconds > 0 && task.progress_processed > 0 && task.progress_total > 0) {
    const rate = task.progress_processed / seconds;
    progress.records_per_second = Math.round(rate);
    progress.seconds_left = Math.ceil((task.progress_total - task.progress_processed) / rate);
  }
  return progress;
}

/** The answer to an initiate call (decisions 4.1, 4.3): `{id, created_at, status}`. */
export function createdTask(task: TaskRow): { id: string; created_at: string; status: string } {
  return { id: task.id, created_at: task.created_at.toISOString(), status: task.status };
}
