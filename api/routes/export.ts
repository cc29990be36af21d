import Router from '@koa/router';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { TaskBus } from '../../pipeline/bus/bus.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import { admitExport, RateLimitedError } from '../../pipeline/db/export-tasks.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { deleteTask, findTask, type TaskRow } from '../../pipeline/db/tasks.js';
import { ApiError } from '../../pipeline/errors.js';
import { exportFields, nonUniqueFieldNames } from '../../pipeline/export/pointers.js';
import type { ExportTaskOptions } from '../../pipeline/export/run-export.js';
import type { Logger } from '../../pipeline/log.js';
import { isTaskId, newTaskId } from '../../pipeline/tasks/task-id.js';
import { schemaCauses, validateExportRequest } from '../../schemas/index.js';
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

const parseJson = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: '100kb',
  urlencoded: false,
  text: false,
  multipart: false,
});

/** POST /_api/admin/users/export and GET /_api/admin/users/export/:id (spec 4.1, 4.2). */
export function exportRoutes({ config, pool, bus, blobs, log, admin }: ExportRouteDependencies): Router {
  const router = new Router();
  const enabled: Middleware = async (_ctx, next) => {
    if (!blobs) throw new ApiError('InternalError', 'UserExportDisabled', 'user export is disabled');
    await next();
  };

  router.post('/_api/admin/users/export', ...admin, enabled, async (ctx) => {
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
    const fields = exportFields(request.csv?.fields, config.project.customAttributes.keys());
    const names = request.format === 'csv' ? nonUniqueFieldNames(fields) : undefined;
    if (names) {
      throw new ApiError('Invalid', 'UserExportNonUniqueFieldNames', 'field names are not unique', {
        field_names: names,
      });
    }
    const options: ExportTaskOptions = { format: request.format, fields };
    let task: TaskRow;
    try {
      task = await admitExport(pool, config.export, { id: newTaskId('export'), options });
    } catch (err) {
      if (err instanceof RateLimitedError) ctx.set('Retry-After', String(err.retryAfterSeconds));
      throw err;
    }
    try {
      await bus.publish({ task_id: task.id, kind: 'export' });
    } catch (err) {
      log.error({ err, task_id: task.id }, 'could not publish the export task');
      await deleteTask(pool, task.id);
      throw new ApiError(
        'ServiceUnavailable',
        'TaskQueueUnavailable',
        'the task queue is unavailable; try again later',
      );
    }
    ctx.body = { id: task.id, created_at: task.created_at.toISOString(), status: task.status };
  });

  router.get('/_api/admin/users/export/:id', ...admin, enabled, async (ctx) => {
    const id = ctx.params.id ?? '';
    const task = isTaskId('export', id)
      ? await findTask(pool, 'export', id, config.taskRetentionSeconds)
      : undefined;
    if (!task) throw new ApiError('NotFound', 'TaskNotFound', 'no such export task');
    ctx.body = exportStatus(task, blobs as BlobStorage, config.export.downloadUrlSeconds);
  });

  return router;
}

/** The export task as spec 2.1 shows it, with a fresh signed URL once its file is written. */
function exportStatus(task: TaskRow, blobs: BlobStorage, urlSeconds: number): Record<string, unknown> {
  const status = taskStatus(task);
  if (task.file_name) status.download_url = blobs.readUrl(task.file_name, urlSeconds);
  return status;
}
