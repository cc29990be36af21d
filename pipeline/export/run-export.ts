import type { ExportTaskOptions } from '../../schemas/index.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import type { FileDigest } from '../blob/file-digest.js';
import { requireExportStorage } from '../blob/open-blob-storage.js';
import { attemptBlobName, type TaskFileNames, taskFileHeaders, taskFileName } from '../blob/task-files.js';
import { nextRange } from '../db/export-parts.js';
import { recordTaskBlob } from '../db/task-blobs.js';
import { completeExport } from '../db/tasks/endings.js';
import { setProgressTotal } from '../db/tasks/progress.js';
import { withSnapshot } from '../db/transaction.js';
import { currentSnapshot } from '../db/user-change-log.js';
import { usersExported } from '../operator/metrics.js';
import { taskProject } from '../projects/project-registry.js';
import type { TaskRun } from '../tasks/run-task.js';
import { exportTaskOptions } from '../tasks/task-options.js';
import { exportReadSource } from './read-source.js';
import { holdReader } from './reader-hold.js';
import { commitParts, type ExportDependencies, stageParts } from './split-export.js';
import { exportedUsersSql, prepareSnapshot } from './user-rows.js';
import { snapshotSettings, writeRecords } from './write-records.js';

/**
 * Runs an export task: one block blob written from one snapshot, then the task is completed with
 * the file's name. An export of more users than `export.partUsers` is split into parts that any
 * worker may write (split-export.ts). Running it again is safe: an attempt cut short (a fault, a
 * cancel) never committed its blob, and its staged blocks are discarded.
 */
export async function runExport(deps: ExportDependencies, run: TaskRun): Promise<void> {
  const storage = requireExportStorage(deps.blobs);
  const options = exportTaskOptions(run.task.options);
  const fileName = taskFileName(
    run.task.project_id,
    run.task.id,
    options.format,
    new Date(),
    options.compression,
  );
  const blobName = attemptBlobName(run.task.project_id, fileName);
  // Recorded first, so that a file this attempt commits and then fails to name is found and deleted.
  await recordTaskBlob(deps.pool, run.task.id, blobName);
  let file: ExportedFile;
  try {
    file = await writeExportFile(deps, storage, run, options, { fileName, blobName });
  } catch (err) {
    await storage.discard(blobName).catch(() => {}); // the blocks expire unclaimed anyway
    throw err;
  }
  await storage.setMetadata(blobName, {
    records: String(file.records),
    bytes: String(file.digest.bytes),
    sha256: file.digest.sha256,
  });
  // Cancelled just as it finished, or no longer this attempt's: a file the task does not name is
  // not kept.
  if ((await completeExport(deps.pool, run.task, blobName, file.digest, file.snapshot)) !== blobName)
    await storage.delete(blobName);
  else usersExported.inc(file.records);
}

/** A written export file: how many records it holds, its digest, and the snapshot it shows. */
interface ExportedFile {
  readonly records: number;
  readonly digest: FileDigest;
  /** The snapshot (pg_snapshot text) the records were read in: the export's changes_cursor. */
  readonly snapshot: string;
}

/**
 * Reads the records in one snapshot, held only while they are read: an export of one part's worth
 * is written and digested as it is read; a larger one is staged in parts (split-export.ts), whose
 * blocks are committed and digested after the snapshot ended. Nothing walks every user first: the
 * first range's walk tells which of the two it is.
 */
async function writeExportFile(
  deps: ExportDependencies,
  storage: BlobStorage,
  run: TaskRun,
  options: ExportTaskOptions,
  names: TaskFileNames,
): Promise<ExportedFile> {
  const headers = taskFileHeaders(names.fileName, options.format, options.compression);
  const source = await exportReadSource(deps, run);
  const reader = await holdReader(deps, run);
  const read = await withSnapshot(source.pool, async (client) => {
    const settings = snapshotSettings(options);
    if (settings.passwordHashes)
      run.log.warn({ include_password_hashes: true }, 'the export file holds password hashes');
    await prepareSnapshot(client, run.task.project_id, settings);
    const snapshot = await currentSnapshot(client);
    const first = await nextRange(
      client,
      exportedUsersSql(settings),
      deps.config.export.partUsers,
      undefined,
    );
    await setProgressTotal(deps.pool, run.task, first.through === undefined ? first.users : 0);
    if (first.through !== undefined) {
      await reader.release(); // its parts take readers of their own
      const staged = await stageParts(deps, storage, client, run, settings, {
        blobName: names.blobName,
        first,
        onStandby: source.onStandby,
      });
      return { snapshot, ...staged };
    }
    const { digest } = await writeRecords(client, settings, options, {
      totpIssuer: (await taskProject(deps.projects, run.task.project_id)).publicOrigin,
      header: true,
      progress: (n) => run.progress(n),
      signal: run.signal,
      sink: (file) => storage.upload(names.blobName, file, headers, run.signal),
    });
    return { snapshot, records: first.users, digest };
  }).finally(() => reader.release());
  const digest =
    'digest' in read
      ? read.digest
      : await commitParts(storage, run, { blobName: names.blobName, headers, blockIds: read.blockIds });
  return { records: read.records, digest, snapshot: read.snapshot };
}
