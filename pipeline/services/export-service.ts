import type { ExportRequest, ExportTaskOptions } from '../../schemas/index.js';
import { newTaskId } from '../../schemas/task-id.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import { exportMessage } from '../bus/task-message.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { listTasks, type TaskKey, type TaskListPage } from '../db/tasks/task-lists.js';
import { findTask, type TaskRow } from '../db/tasks/task-rows.js';
import { ApiError } from '../errors.js';
import { exportFields, nonUniqueFieldNames } from '../export/pointers.js';
import { admitTask } from '../tasks/admit-task.js';
import { failAndRefund, TASK_ENDINGS } from '../tasks/task-failure.js';
import type { TaskRequest } from './task-requests.js';

/** What the facade asks of exports: start one, read one, cancel one, sign its file's URL. */
export interface ExportService {
  /** Throws UserExportDisabled when the service has no blob storage (decisions 7). */
  available(): void;
  /**
   * Records the export as a pending task if the project's limits admit it; the task an earlier
   * request with the same Idempotency-Key made, if there was one. Refuses what the schema cannot
   * say: duplicate CSV field names, password hashes outside ndjson or against the project's policy.
   */
  start(request: ExportRequest, from: TaskRequest): Promise<TaskRow>;
  /** The project's export task (TaskNotFound when there is none, or it is past retention). */
  find(id: string): Promise<TaskRow>;
  /** A page of the project's export tasks, newest first, and the key after its last when more follow. */
  list(page: TaskListPage): Promise<{ tasks: TaskRow[]; next: TaskKey | undefined }>;
  /** Ends a pending or running export Cancelled; TaskAlreadyCompleted when it had ended. */
  cancel(task: TaskRow): Promise<TaskRow>;
  /** A fresh signed URL of a completed export's file. */
  downloadUrl(fileName: string): string;
}

export interface ExportServiceDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  /** Tells the outbox relay a task was just recorded, so its message goes out now. */
  readonly taskCreated: () => void;
}

export function exportService({
  config,
  pool,
  blobs,
  taskCreated,
}: ExportServiceDependencies): ExportService {
  const storage = (): BlobStorage => {
    if (!blobs) throw new ApiError('UserExportDisabled', 'user export is disabled');
    return blobs;
  };
  const find = async (id: string): Promise<TaskRow> => {
    const task = await findTask(pool, config.project.id, 'export', id, config.taskRetentionSeconds);
    if (!task) throw new ApiError('TaskNotFound', 'no such export task');
    return task;
  };

  return {
    available: () => void storage(),

    async start(request, from) {
      const options = exportOptions(request, config);
      const id = newTaskId('export');
      const task = await admitTask(
        pool,
        {
          id,
          kind: 'export',
          total: 0,
          ...(from.idempotency ? { idempotency: from.idempotency } : {}),
          project: config.project.id,
          message: exportMessage(id),
          options: { ...options },
          requestedBy: from.requestedBy,
        },
        { kind: 'export', export: config.export },
      );
      taskCreated();
      return task;
    },

    find,

    list: (page) => listTasks(pool, config.project.id, 'export', page, config.taskRetentionSeconds),

    async cancel(task) {
      // Only a pending task can end Cancelled; one that completed meanwhile is left as it is.
      const cancelled = { cancelled: true };
      if (!(await failAndRefund(pool, config.export, task.id, TASK_ENDINGS.cancelled(), cancelled))) {
        throw new ApiError('TaskAlreadyCompleted', 'the export has already completed');
      }
      return find(task.id);
    },

    downloadUrl: (fileName) => storage().readUrl(fileName, config.export.downloadUrlSeconds),
  };
}

/** The settings an export task keeps, from a request its schema accepted. */
function exportOptions(request: ExportRequest, config: ServiceConfig): ExportTaskOptions {
  // ndjson files hold whole records: columns exist only for CSV.
  const fields =
    request.format === 'csv' ? exportFields(request.csv?.fields, config.project.customAttributes.keys()) : [];
  const names = nonUniqueFieldNames(fields);
  if (names) {
    throw new ApiError('UserExportNonUniqueFieldNames', 'field names are not unique', { field_names: names });
  }
  if (request.include_password_hashes === true) {
    if (request.format !== 'ndjson') {
      throw new ApiError('ValidationFailed', 'invalid request body', {
        causes: [
          {
            location: '/include_password_hashes',
            kind: 'format',
            details: { message: 'password hashes are written to ndjson exports only' },
          },
        ],
      });
    }
    if (!config.project.passwordHashes.exportAllowed) {
      throw new ApiError(
        'PasswordHashExportNotAllowed',
        'the project does not allow exports of password hashes',
      );
    }
  }
  return {
    format: request.format,
    ...(request.include_password_hashes === true ? { include_password_hashes: true } : {}),
    fields,
    escape_formulas: request.csv?.escape_formulas === true,
    ...(request.compression ? { compression: request.compression } : {}),
    filters: {
      ...(request.created_after ? { created_after: request.created_after } : {}),
      ...(request.updated_since ? { updated_since: request.updated_since } : {}),
      ...(request.disabled === undefined ? {} : { disabled: request.disabled }),
    },
  };
}
