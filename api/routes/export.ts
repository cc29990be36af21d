import Router from '@koa/router';
import type { Middleware } from 'koa';
import { encodeCursor, snapshotCursor } from '../../pipeline/changes/changes-cursor.js';
import { ApiError } from '../../pipeline/errors.js';
import type { ExportService } from '../../pipeline/services/export-service.js';
import type { TaskRow } from '../../pipeline/services/task-requests.js';
import { schemaCauses, validateExportRequest } from '../../schemas/index.js';
import { isTaskId } from '../../schemas/task-id.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { jsonBody } from '../json-body.js';
import { scopeOf } from '../project-scope.js';
import { requestedBy } from '../request-log.js';
import { taskList, taskListPage } from './task-list.js';
import { createdTask, taskStatus } from './task-status.js';

const parseJson = jsonBody('100kb');
const PATH = '/_api/admin/users/export';

/**
 * POST /_api/admin/users/export and GET /_api/admin/users/export/:id (decisions 4.1, 4.2), and DELETE on
 * the status path, which cancels a pending or running export (docs/decisions.md, Tasks).
 */
export function exportRoutes(admin: readonly Middleware[]): Router {
  const router = new Router();
  /** The project's export task named by the path, or TaskNotFound. */
  const taskOf = (exports: ExportService, id: string): Promise<TaskRow> =>
    isTaskId('export', id)
      ? exports.find(id)
      : Promise.reject(new ApiError('TaskNotFound', 'no such export task'));

  router.post(PATH, ...admin, async (ctx) => {
    const { exports } = scopeOf(ctx);
    exports.available();
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
    const idempotency = idempotencyKeyOf(ctx, request, (message) => new ApiError('BadRequest', message));
    const task = await exports.start(request, {
      ...(idempotency ? { idempotency } : {}),
      requestedBy: requestedBy(ctx),
    });
    ctx.body = createdTask(task);
  });

  router.get(PATH, ...admin, async (ctx) => {
    const { exports } = scopeOf(ctx);
    exports.available();
    const page = taskListPage(ctx.query, (message) => new ApiError('BadRequest', message));
    ctx.body = taskList(await exports.list(page), page, ctx.path, (task) => exportStatus(task, exports));
  });

  router.get(`${PATH}/:id`, ...admin, async (ctx) => {
    const { exports } = scopeOf(ctx);
    exports.available();
    ctx.body = exportStatus(await taskOf(exports, ctx.params.id ?? ''), exports);
  });

  router.delete(`${PATH}/:id`, ...admin, async (ctx) => {
    const { exports } = scopeOf(ctx);
    exports.available();
    ctx.body = exportStatus(await exports.cancel(await taskOf(exports, ctx.params.id ?? '')), exports);
  });

  return router;
}

/**
 * The export task as decisions 2.1 shows it, with a fresh signed URL once its file is written, and what
 * proves a download whole: the file's records, bytes and SHA-256 (hex).
 */
function exportStatus(task: TaskRow, exports: ExportService): Record<string, unknown> {
  const status = taskStatus(task);
  if (!task.file_name) return status;
  status.download_url = exports.downloadUrl(task.file_name);
  status.record_count = task.progress_total;
  if (task.file_bytes !== null) status.file_bytes = Number(task.file_bytes);
  if (task.file_sha256 !== null) status.file_sha256 = task.file_sha256;
  if (task.changes_snapshot !== null)
    status.changes_cursor = encodeCursor(snapshotCursor(task.changes_snapshot));
  return status;
}
