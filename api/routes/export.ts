import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import { admitExport, RateLimitedError } from '../../pipeline/db/export-tasks.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { findTask, type TaskRow } from '../../pipeline/db/tasks.js';
import { ApiError } from '../../pipeline/errors.js';
import { exportFields, nonUniqueFieldNames } from '../../pipeline/export/pointers.js';
import type { ExportTaskOptions } from '../../pipeline/export/run-export.js';
import type { Logger } from '../../pipeline/log.js';
import { isTaskId, newTaskId } from '../../pipeline/tasks/task-id.js';
import { schemaCauses, validateExportRequest } from '../../schemas/index.js';
import { jsonBody } from '../json-body.js';
import { createdTask, publishTask } from './publish-task.js';
import { taskStatus } from './task-status.js';

/** What the export routes stand on. */
export interface ExportRouteDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  readonly bus: TaskBus;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  readonly log: Logger;
  /** Host and admin JWT checks, shared with the other admin routes. */
  readonly admin: readonly Middleware[];
}

const parseJson = jsonBody('100kb');

/** POST /_api/admin/users/export and GET /_api/admin/users/export/:id (spec 4.1, 4.2). */
export function exportRoutes({ config, pool, bus, blobs, log, admin }: ExportRouteDependencies): Router {
  const router = new Router();
  /** The files' storage; both endpoints answer UserExportDisabled without one (spec 7). */
  const storage = (): BlobStorage => {
    if (!blobs) throw new ApiError('InternalError', 'UserExportDisabled', 'user export is disabled');
    return blobs;
  };

  router.post('/_api/admin/users/export', ...admin, async (ctx) => {
    storage();
    if (!ctx.is('application/json')) {
      throw new ApiError('Invalid', 'BadRequest', 'Content-Type must be application/json');
    }
    await parseJson(ctx, async () => {});
    const request: unknown = ctx.request.body;
    if (!validateExportRequest(request)) {
      throw new ApiError('Invalid', 'ValidationFailed', 'invalid request body', {
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
      throw new ApiError('Invalid', 'UserExportNonUniqueFieldNames', 'field names are not unique', {
        field_names: names,
      });
    }
    const options: ExportTaskOptions = { format: request.format, fields };
    let task: TaskRow;
    try {
      task = await admitExport(pool, config.export, { id: newTaskId('export'), options: { ...options } });
    } catch (err) {
      if (err instanceof RateLimitedError) ctx.set('Retry-After', String(err.retryAfterSeconds));
      throw err;
    }
    if (!(await publishTask(bus, pool, log, task))) {
      throw new ApiError(
        'ServiceUnavailable',
        'TaskQueueUnavailable',
        'the task queue is unavailable; try again later',
      );
    }
    ctx.body = createdTask(task);
  });

  router.get('/_api/admin/users/export/:id', ...admin, async (ctx) => {
    const files = storage();
    const id = ctx.params.id ?? '';
    const task = isTaskId('export', id)
      ? await findTask(pool, 'export', id, config.taskRetentionSeconds)
      : undefined;
    if (!task) throw new ApiError('NotFound', 'TaskNotFound', 'no such export task');
    ctx.body = exportStatus(task, files, config.export.downloadUrlSeconds);
  });

  return router;
}

/** The export task as spec 2.1 shows it, with a fresh signed URL once its file is written. */
function exportStatus(task: TaskRow, blobs: BlobStorage, urlSeconds: number): Record<string, unknown> {
  const status = taskStatus(task);
  if (task.file_name) status.download_url = blobs.readUrl(task.file_name, urlSeconds);
  return status;
}
