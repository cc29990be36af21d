import type { BlobStorage } from './blob/blob-storage.js';
import type { Pool } from './db/pool.js';
import { deleteTasks, findTasksPastRetention } from './db/tasks.js';
import type { Logger } from './log.js';

/**
 * Deletes completed tasks past retention: an export's file first, then the task with its details
 * and stored input. A task whose file could not be deleted is kept for the next sweep (reads
 * already refuse it), so no file outlives its task unnoticed. Returns the ids deleted.
 */
export async function sweepExpiredTasks(
  pool: Pool,
  blobs: BlobStorage | undefined,
  retentionSeconds: number,
  log: Logger,
): Promise<string[]> {
  const expired = await findTasksPastRetention(pool, retentionSeconds);
  const deletable: string[] = [];
  for (const task of expired) {
    if (task.file_name) {
      if (!blobs) continue; // the storage is not reachable from this process: leave it to one that has it
      try {
        await blobs.delete(task.file_name);
      } catch (err) {
        log.error({ err, task_id: task.id }, 'could not delete an expired export file');
        continue;
      }
    }
    deletable.push(task.id);
  }
  if (deletable.length > 0) await deleteTasks(pool, deletable);
  return deletable;
}
