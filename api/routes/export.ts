import Router from '@koa/router';
import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { requireExportStorage } from '../../pipeline/blob/open-blob-storage.js';
import { exportMessage } from '../../pipeline/bus/task-message.js';
import { findTask, type TaskRow } from '../../pipeline/db/tasks/task-rows.js';
import { ApiError } from '../../pipeline/errors.js';
import { exportFields, nonUniqueFieldNames } from '../../pipeline/export/pointers.js';
import { admitTask } from '../../pipeline/tasks/admit-task.js';
import { failAndRefund, TASK_ENDINGS } from '../../pipeline/tasks/task-failure.js';
import { type ExportTaskOptions, schemaCauses, validateExportRequest } from '../../schemas/index.js';
import { isTaskId, newTaskId } from '../../schemas/task-id.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { jsonBody } from '../json-body.js';
import { requestedBy } from '../request-log.js';
import type { TaskRouteDependencies } from './task-routes.js';
import { createdTask, taskStatus } from './task-status.js';

const parseJson = jsonBody('100kb');
const PATH = '/_api/admin/users/export';

/**
 * POST /_api/admin/users/export and GET /_api/admin/users/export/:id (decisions 4.1, 4.2), and DELETE on
 * the status path, which cancels a pending or running export (docs/decisions.md, Tasks).
 */
export function exportRoutes({ config, pool, blobs, taskCreated, admin }: TaskRouteDependencies): Router {
  const router = new Router();
  const storage = () => requireExportStorage(blobs);
  /** The project's export task named by the path, or TaskNotFound. */
  const taskOf = async (id: string): Promise<TaskRow> => {
    const task = isTaskId('export', id)
      ? await findTask(pool, config.project.id, 'export', id, config.taskRetentionSeconds)
      : undefined;
    if (!task) throw new ApiError('TaskNotFound', 'no such export task');
    return task;
  };

  router.post(PATH, ...admin, async (ctx) => {
    storage();
    if (!ctx.is('application/json')) {
      throw new ApiError('BadRequest', 'Content-Type must be application/json');
    }
    await parseJson(ctx, async () => {});
    const request: unknown = ctx.request.body;
    if (!validateExportRequest(request)) {
      throw new ApiError('ValidationFailed', 'invalid request body', {
        causes: schemaCauses(validateExportRequest),
      });
    }
    // ndjson files hold whole records: columns exist only for CSV.
    const fields =
      request.format === 'csv'
        ? exportFields(request.csv?.fields, config.project.customAttributes.keys())
        : [];
    const names = nonUniqueFieldNames(fields);
    if (names) {
      throw new ApiError('UserExportNonUniqueFieldNames', 'field names are not unique', {
        field_names: names,
      });
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
    const options: ExportTaskOptions = {
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
    const idempotency = idempotencyKeyOf(ctx, request, (message) => new ApiError('BadRequest', message));
    const id = newTaskId('export');
    const task = await admitTask(
      pool,
      {
        id,
        kind: 'export',
        total: 0,
        ...(idempotency ? { idempotency } : {}),
        project: config.project.id,
        message: exportMessage(id),
        options: { ...options },
        requestedBy: requestedBy(ctx),
      },
      { kind: 'export', export: config.export },
    );
    taskCreated();
    ctx.body = createdTask(task);
  });

  router.get(`${PATH}/:id`, ...admin, async (ctx) => {
    const files = storage();
    ctx.body = exportStatus(await taskOf(ctx.params.id ?? ''), files, config.export.downloadUrlSeconds);
  });

  router.delete(`${PATH}/:id`, ...admin, async (ctx) => {
    const files = storage();
    const task = await taskOf(ctx.params.id ?? '');
    // Only a pending task can end Cancelled; one that completed meanwhile is left as it is.
    const cancelled = { cancelled: true };
    if (!(await failAndRefund(pool, config.export, task.id, TASK_ENDINGS.cancelled(), cancelled))) {
      throw new ApiError('TaskAlreadyCompleted', 'the export has already completed');
    }
    ctx.body = exportStatus(await taskOf(task.id), files, config.export.downloadUrlSeconds);
  });

  return router;
}

/**
 * The export task as decisions 2.1 shows it, with a fresh signed URL once its file is written, and what
 * proves a download whole: the file's records, bytes and SHA-256 (hex).
 */
function exportStatus(task: TaskRow, blobs: BlobStorage, urlSeconds: number): Record<string, unknown> {
  const status = taskStatus(task);
  if (!task.file_name) return status;
  status.download_url = blobs.readUrl(task.file_name, urlSeconds);
  status.record_count = task.progress_total;
  if (task.file_bytes !== null) status.file_bytes = Number(task.file_bytes);
  if (task.file_sha256 !== null) status.file_sha256 = task.file_sha256;
  return status;
}
