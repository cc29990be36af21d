import Router from '@koa/router';
import type { Pool } from '../../pipeline/db/pool.js';
import { findTask, type TaskRow } from '../../pipeline/db/tasks.js';
import { ApiError } from '../../pipeline/errors.js';
import { KEY_OF_ATTRIBUTE } from '../../pipeline/identity/login-id-attributes.js';
import { findImportDetails } from '../../pipeline/import/import-details.js';
import { createImportTask } from '../../pipeline/import/import-tasks.js';
import { sealRecords } from '../../pipeline/import/parse-records.js';
import { isTaskId } from '../../pipeline/tasks/task-id.js';
import { validateImportRequest } from '../../schemas/index.js';
import { ImportRequestError } from '../errors.js';
import { inFlightLimit } from '../in-flight-limit.js';
import { importBody } from './import-body.js';
import { requireHttps } from './require-https.js';
import type { TaskRouteDependencies } from './task-routes.js';
import { createdTask, taskStatus } from './task-status.js';

/** Import requests whose bodies are read, parsed and stored at once by one facade process. */
const IMPORTS_IN_FLIGHT = 8;

/** POST /_api/admin/users/import and GET /_api/admin/users/import/:id (spec 4.3, 4.4). */
export function importRoutes({ config, pool, secrets, taskCreated, admin }: TaskRouteDependencies): Router {
  const router = new Router();
  const bounded = inFlightLimit(IMPORTS_IN_FLIGHT);

  router.post('/_api/admin/users/import', requireHttps, ...admin, bounded, importBody, async (ctx) => {
    const request: unknown = ctx.request.body;
    if (!validateImportRequest(request)) {
      const problems = (validateImportRequest.errors ?? []).map(
        (e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`,
      );
      throw new ImportRequestError(400, problems.join('; '));
    }
    if (!config.project.loginIdKeys.has(KEY_OF_ATTRIBUTE[request.identifier])) {
      throw new ImportRequestError(
        400,
        `/identifier: login id key ${KEY_OF_ATTRIBUTE[request.identifier]} is not enabled`,
      );
    }
    const task = await createImportTask(pool, {
      project: config.project.id,
      identifier: request.identifier,
      upsert: request.upsert ?? false,
      records: sealRecords(request.records, secrets),
    });
    taskCreated();
    ctx.body = createdTask(task);
  });

  router.get('/_api/admin/users/import/:id', requireHttps, ...admin, async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isTaskId('import', id)) throw new ImportRequestError(400, 'invalid import task id');
    const task = await findTask(pool, config.project.id, 'import', id, config.taskRetentionSeconds);
    if (!task) throw new ApiError('NotFound', 'TaskNotFound', 'no such import task');
    ctx.body = await importStatus(pool, task);
  });

  return router;
}

/** The import task as spec 2.3 shows it, with the members of DECISIONS.md. */
async function importStatus(pool: Pool, task: TaskRow): Promise<Record<string, unknown>> {
  const status = taskStatus(task);
  if (task.status === 'pending') return status;
  if (task.summary) status.summary = task.summary;
  status.details = await findImportDetails(pool, task.id);
  return status;
}
