import type { Readable } from 'node:stream';
import type { ImportRequest } from '../../schemas/index.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import { sealedFileName } from '../blob/task-files.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { listTasks, type TaskKey, type TaskListPage } from '../db/tasks/task-lists.js';
import { findTask, type TaskRow } from '../db/tasks/task-rows.js';
import { withTransaction } from '../db/transaction.js';
import { ApiError } from '../errors.js';
import {
  commitUploadBlocks,
  type FileImportRequest,
  giveFileTo,
  type NewUpload,
  namedFile,
  newUpload,
  stageUploadBlock,
} from '../import/file-uploads.js';
import { type DetailsPage, type FoundDetails, findImportDetails } from '../import/import-details.js';
import { importTask } from '../import/import-tasks.js';
import { sealRecords } from '../import/parse-records.js';
import { urlFiles } from '../import/url-source.js';
import { admitIn, admitTask } from '../tasks/admit-task.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import type { TaskRequest } from './task-requests.js';

export type { DetailsPage };

/** What the facade asks of imports: start one, read one and its details. */
export interface ImportService {
  /**
   * Records the import as a pending task, its records' secrets sealed, if the backlog admits it;
   * the task an earlier request with the same Idempotency-Key made, if there was one.
   */
  start(request: ImportRequest, from: TaskRequest): Promise<TaskRow>;
  /** A new upload for a file import (ImportFilesDisabled without blob storage). */
  newUpload(): Promise<NewUpload>;
  /** Writes block `n` of an open upload through the service. */
  stageUploadBlock(uploadId: string, n: number, block: Buffer): Promise<void>;
  /** Commits blocks 0..blocks-1 of an open upload as its file. */
  commitUpload(uploadId: string, blocks: number): Promise<void>;
  /** The project's import task (TaskNotFound when there is none, or it is past retention). */
  find(id: string): Promise<TaskRow>;
  /** A page of the project's import tasks, newest first, and the key after its last when more follow. */
  list(page: TaskListPage): Promise<{ tasks: TaskRow[]; next: TaskKey | undefined }>;
  /** A page of a completed import's details, in request order. */
  details(task: TaskRow, page: DetailsPage & { readonly limit: number }): Promise<FoundDetails>;
  /** A fresh signed URL of a completed import's results file; undefined without blob storage. */
  resultsUrl(fileName: string): string | undefined;
  /** A completed import's results file, streamed (ImportResultsUnavailable when it has none). */
  resultsFile(task: TaskRow): Promise<Readable>;
}

export interface ImportServiceDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  readonly secrets: SecretBox;
  /** Where results files are kept (the export files' storage); undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  /** Tells the outbox relay a task was just recorded, so its message goes out now. */
  readonly taskCreated: () => void;
}

export function importService({
  config,
  pool,
  secrets,
  blobs,
  taskCreated,
}: ImportServiceDependencies): ImportService {
  const urls = urlFiles(config.webhooks);
  const storage = () => {
    if (!blobs)
      throw new ApiError('ImportFilesDisabled', 'file imports need blob storage, which is not configured');
    return blobs;
  };
  return {
    async start(request, from) {
      const limits = { kind: 'import', pendingRecords: config.importPendingRecordsLimit } as const;
      const asked = {
        ...(from.idempotency ? { idempotency: from.idempotency } : {}),
        requestedBy: from.requestedBy,
        project: config.project.id,
        identifier: request.identifier,
        upsert: request.upsert ?? false,
        ...(request.dry_run ? { dry_run: true } : {}),
      };
      let task: TaskRow;
      if (isFileImport(request)) {
        const file = await namedFile(pool, storage(), urls, secrets, config, request);
        task = await withTransaction(pool, async (client) => {
          const row = await admitIn(client, importTask({ ...asked, file: file.request }), limits);
          await giveFileTo(client, config, file, row.id, sealedFileName(config.project.id, row.id));
          return row;
        });
      } else {
        task = await admitTask(
          pool,
          importTask({ ...asked, ...sealRecords(request.records ?? [], secrets) }),
          limits,
        );
      }
      taskCreated();
      return task;
    },

    newUpload: () => newUpload(pool, storage(), config),
    stageUploadBlock: (uploadId, n, block) => stageUploadBlock(pool, storage(), config, uploadId, n, block),
    commitUpload: (uploadId, blocks) => commitUploadBlocks(pool, storage(), config, uploadId, blocks),

    async find(id) {
      const task = await findTask(pool, config.project.id, 'import', id, config.taskRetentionSeconds);
      if (!task) throw new ApiError('TaskNotFound', 'no such import task');
      return task;
    },

    list: (page) => listTasks(pool, config.project.id, 'import', page, config.taskRetentionSeconds),

    details: (task, page) => findImportDetails(pool, task.id, page),

    resultsUrl: (fileName) => blobs?.readUrl(fileName, config.export.downloadUrlSeconds),

    async resultsFile(task) {
      if (!task.file_name || !blobs) {
        throw new ApiError('ImportResultsUnavailable', 'the import has no results file');
      }
      return blobs.read(task.file_name);
    },
  };
}

function isFileImport(request: ImportRequest): request is FileImportRequest {
  return request.source !== undefined && request.format !== undefined;
}
