import type { BlobStorage } from '../blob/blob-storage.js';
import { deleteFile, fileBlobNames, filesToSweep } from '../db/import-files.js';
import type { Pool } from '../db/pool.js';
import { findAbandonedTaskBlobs, forgetTaskBlobs, unnamedBlobs } from '../db/task-blobs.js';
import { deleteTasks, findTasksPastRetention } from '../db/tasks/retention.js';
import { saveUpkeepState, upkeepState } from '../db/upkeep-jobs.js';
import type { Logger } from '../log.js';

/**
 * Deletes completed tasks past retention: an export's file first, then the task with its
 * details. A task whose file could not be deleted is kept for the next sweep (reads
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

/** How many recorded blobs of attempts that are over one round deletes. */
const ABANDONED_BATCH = 100;

/**
 * Deletes the files of task attempts that ended without their task naming them: an attempt
 * that committed its blob and then died (a killed worker, a Postgres blip) before it completed
 * its task, which a later attempt then completed with a file of its own, or which ended failed.
 * Returns the names deleted.
 */
export async function deleteAbandonedTaskFiles(pool: Pool, blobs: BlobStorage): Promise<string[]> {
  const names = await findAbandonedTaskBlobs(pool, ABANDONED_BATCH);
  for (const name of names) await blobs.delete(name);
  if (names.length > 0) await forgetTaskBlobs(pool, names);
  return names;
}

/** A file under a project's folder: `<project>/...`. */
const FOLDER = /^([a-z0-9][a-z0-9-]*)\//;
/**
 * A file of a project from before the folders: `<project>-<task id>-...` at the top, matched whole,
 * since a project's id may begin another's (`a` and `a-user...`).
 */
const LEGACY = /^([a-z0-9][a-z0-9-]*)-user(?:import|export)_[A-Z2-7]{32}-[^/]*$/;

/** Blobs the container sweep lists per turn: its cost per turn is bounded, whatever the container holds. */
const CONTAINER_PAGE = 5_000;
/** The container sweep's job: where its listing stands between turns. */
const CONTAINER_SWEEP = 'container-sweep';

/**
 * Deletes the blobs under the projects' folders that are older than the retention and that no task
 * names, one page of the container's listing per call (`pageSize` blobs), going on from where the
 * last call stopped and starting over after the last page: whatever wrote a blob (an attempt whose
 * record was lost with its database, a hand upload), no file of these projects outlives the
 * retention unnamed for longer than one walk of the container. Blobs elsewhere in the container
 * (other deployments', other projects') are never touched; names of the projects' files from before
 * the folders (`<project>-<task>-...` at the top) are swept too. The files of file imports are kept
 * for their own time (sweepImportFiles). Returns the names deleted.
 */
export async function deleteUnnamedTaskFiles(
  pool: Pool,
  blobs: BlobStorage,
  retentionSeconds: number,
  projectIds: readonly string[],
  { pageSize = CONTAINER_PAGE }: { readonly pageSize?: number } = {},
): Promise<string[]> {
  const cutoff = new Date(Date.now() - retentionSeconds * 1000);
  const projects = new Set(projectIds);
  const continuation = await upkeepState(pool, CONTAINER_SWEEP);
  const page = await blobs.listPageCreatedBefore(cutoff, { continuation, pageSize });
  // One listing of the container, whatever the number of projects, kept to the projects' files.
  const old = page.names.filter((name) => {
    const project = FOLDER.exec(name)?.[1] ?? LEGACY.exec(name)?.[1];
    return project !== undefined && projects.has(project);
  });
  const files = old.length === 0 ? new Set<string>() : await fileBlobNames(pool, old);
  const names =
    old.length === 0
      ? []
      : await unnamedBlobs(
          pool,
          old.filter((name) => !files.has(name)),
        );
  for (const name of names) await blobs.delete(name);
  if (names.length > 0) await forgetTaskBlobs(pool, names);
  await saveUpkeepState(pool, CONTAINER_SWEEP, page.next);
  return names;
}

/** How many files of file imports one round sweeps. */
const IMPORT_FILES_BATCH = 100;

/**
 * Deletes the files of file imports whose time is over: uploads that no import named before their
 * URL expired, and sealed copies kept past IMPORT_FILE_RETENTION_SECONDS (with an upload a fault
 * left behind). Blobs first, then the row, so that a blob is never left unnamed. Returns how many.
 */
export async function sweepImportFiles(pool: Pool, blobs: BlobStorage): Promise<number> {
  const files = await filesToSweep(pool, IMPORT_FILES_BATCH);
  for (const file of files) {
    await blobs.delete(file.upload_blob);
    if (file.sealed_blob) await blobs.delete(file.sealed_blob);
    await deleteFile(pool, file);
  }
  return files.length;
}
