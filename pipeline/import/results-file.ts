import type { BlobStorage } from '../blob/blob-storage.js';
import { digestInto } from '../blob/file-digest.js';
import { attemptBlobName, taskFileHeaders, taskFileName } from '../blob/task-files.js';
import { type Pool, withClient } from '../db/pool.js';
import { recordTaskBlob } from '../db/task-blobs.js';
import type { TaskFile } from '../db/tasks/endings.js';
import type { TaskRun } from '../tasks/run-task.js';
import { streamImportDetailLines } from './import-details.js';

/**
 * Writes an import's results file beside the exports: one JSON line per record, in request order,
 * each the detail a status read shows (records as stored, secrets redacted). Like an export file
 * it is one block blob that appears whole or not at all, recorded before it is written, so that a
 * blob its task never names (this attempt lost the task) is found and deleted.
 */
export async function writeResultsFile(pool: Pool, storage: BlobStorage, run: TaskRun): Promise<TaskFile> {
  const fileName = taskFileName(run.task.project_id, run.task.id, 'ndjson', new Date());
  const name = attemptBlobName(run.task.project_id, fileName);
  await recordTaskBlob(pool, run.task.id, name);
  try {
    const { digest } = await withClient(pool, (client) =>
      digestInto(
        [streamImportDetailLines(client, run.task.id)],
        (file) => storage.upload(name, file, taskFileHeaders(fileName, 'ndjson'), run.signal),
        run.signal,
        run.advanced,
      ),
    );
    return { name, ...digest };
  } catch (err) {
    await storage.discard(name).catch(() => {}); // the blocks expire unclaimed anyway
    throw err;
  }
}
