import Router from '@koa/router';
import type { Middleware } from 'koa';
import { KEY_OF_ATTRIBUTE } from '../../pipeline/identity/login-id-attributes.js';
import type { DetailsPage, ImportService } from '../../pipeline/services/import-service.js';
import type { TaskRow } from '../../pipeline/services/task-requests.js';
import { type ImportRequest, importOutcomes, validateImportRequest } from '../../schemas/index.js';
import { isTaskId } from '../../schemas/task-id.js';
import { ImportRequestError } from '../errors.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { inFlightLimit } from '../in-flight-limit.js';
import { scopeOf } from '../project-scope.js';
import { requestedBy } from '../request-log.js';
import { importBody } from './import-body.js';
import { queryValue } from './list-query.js';
import { requireHttps } from './require-https.js';
import { taskList, taskListPage } from './task-list.js';
import { createdTask, taskStatus } from './task-status.js';

/** Import requests whose bodies are read, parsed and stored at once by one facade process. */
const IMPORTS_IN_FLIGHT = 8;
/** Status reads answered at once by one facade process: a page may hold 10,000 details. */
const STATUS_READS_IN_FLIGHT = 8;

/** POST /_api/admin/users/import and GET /_api/admin/users/import/:id (decisions 4.3, 4.4). */
export function importRoutes(admin: readonly Middleware[]): Router {
  const router = new Router();
  const bounded = inFlightLimit(IMPORTS_IN_FLIGHT);
  const boundedReads = inFlightLimit(STATUS_READS_IN_FLIGHT);

  router.post('/_api/admin/users/import', requireHttps, ...admin, bounded, importBody, async (ctx) => {
    const { config, imports } = scopeOf(ctx);
    const request: unknown = ctx.request.body;
    if (!validateImportRequest(request)) {
      const problems = (validateImportRequest.errors ?? []).map(
        (e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`,
      );
      throw new ImportRequestError(400, problems.join('; '));
    }
    const problem = sourceProblem(request);
    if (problem) throw new ImportRequestError(400, problem);
    if (!config.project.loginIdKeys.has(KEY_OF_ATTRIBUTE[request.identifier])) {
      throw new ImportRequestError(
        400,
        `/identifier: login id key ${KEY_OF_ATTRIBUTE[request.identifier]} is not enabled`,
      );
    }
    const idempotency = idempotencyKeyOf(ctx, request, (message) => new ImportRequestError(400, message));
    const task = await imports.start(request, {
      ...(idempotency ? { idempotency } : {}),
      requestedBy: requestedBy(ctx),
    });
    ctx.body = createdTask(task);
  });

  router.get('/_api/admin/users/import', requireHttps, ...admin, boundedReads, async (ctx) => {
    const { imports } = scopeOf(ctx);
    const page = taskListPage(ctx.query, (message) => new ImportRequestError(400, message));
    ctx.body = taskList(await imports.list(page), page, ctx.path, (task) => importListed(task, imports));
  });

  router.get('/_api/admin/users/import/:id', requireHttps, ...admin, boundedReads, async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isTaskId('import', id)) throw new ImportRequestError(400, 'invalid import task id');
    const { imports } = scopeOf(ctx);
    const task = await imports.find(id);
    ctx.body = await importStatus(imports, task, detailsQuery(ctx.query), ctx.path);
  });

  // The results file through the API's own origin, for the console (a page's CSP and the blob
  // store's CORS keep it from the signed URL); other clients read `results_url`.
  router.get('/_api/admin/users/import/:id/results', requireHttps, ...admin, boundedReads, async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isTaskId('import', id)) throw new ImportRequestError(400, 'invalid import task id');
    const { imports } = scopeOf(ctx);
    ctx.type = 'application/x-ndjson';
    ctx.body = await imports.resultsFile(await imports.find(id));
  });

  return router;
}

/** Why a request names its records wrongly: records or a file, one of them, and `csv` for a CSV only. */
function sourceProblem(request: ImportRequest): string | undefined {
  if (request.records && request.source) return '/: records and source exclude each other';
  if (!request.records && !request.source) return "/: must have required property 'records' or 'source'";
  if (request.csv && request.format !== 'csv') return '/csv: only with format csv';
  if (request.from?.system === 'cognito')
    return "/from/system: cognito's social users merge into the user of their email across the whole file, which a file import does not hold: import it with userctl import --from cognito";
  if (request.from && request.csv) return '/csv: not with from (the system names its columns)';
  return undefined;
}

/** The largest page of details one status read returns. */
const MAX_DETAILS_LIMIT = 10_000;
/**
 * The page of details a status read returns when it names none: a request of 500 KB can hold
 * hundreds of thousands of records, more than an answer should carry at once.
 */
export const DEFAULT_DETAILS_LIMIT = 1_000;

/** A page of details: which, from where, how many. */
type DetailsQuery = DetailsPage & { readonly limit: number };

/**
 * `?details=false` (no details), `?outcome=` (one outcome's details), `?offset=&limit=` (a page of
 * them, limit at most 10,000, 1,000 when not given).
 */
function detailsQuery(query: Record<string, string | string[] | undefined>): DetailsQuery | false {
  const one = (name: string) => queryValue(query, name, (message) => new ImportRequestError(400, message));
  const details = one('details');
  if (details !== undefined && details !== 'true' && details !== 'false') {
    throw new ImportRequestError(400, 'details must be true or false');
  }
  if (details === 'false') return false;
  const outcome = one('outcome');
  if (outcome !== undefined && !(importOutcomes as readonly string[]).includes(outcome)) {
    throw new ImportRequestError(400, `outcome must be one of ${importOutcomes.join(', ')}`);
  }
  const integer = (name: string, min: number, max: number) => {
    const value = one(name);
    if (value === undefined) return undefined;
    const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
    if (!(n >= min && n <= max))
      throw new ImportRequestError(400, `${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const offset = integer('offset', 0, 999_999_999);
  const limit = integer('limit', 1, MAX_DETAILS_LIMIT) ?? DEFAULT_DETAILS_LIMIT;
  return {
    ...(outcome ? { outcome: outcome as NonNullable<DetailsPage['outcome']> } : {}),
    ...(offset === undefined ? {} : { offset }),
    limit,
  };
}

/**
 * An import task as a list shows it: its status read without details; once completed, its summary
 * and its results file (a fresh signed URL, its size and SHA-256) when one was written.
 */
function importListed(task: TaskRow, imports: ImportService): Record<string, unknown> {
  const status = taskStatus(task);
  if (task.status !== 'completed') return status;
  if (task.summary) status.summary = task.summary;
  const url = task.file_name ? imports.resultsUrl(task.file_name) : undefined;
  if (url) {
    status.results_url = url;
    if (task.file_bytes !== null) status.results_bytes = Number(task.file_bytes);
    if (task.file_sha256 !== null) status.results_sha256 = task.file_sha256;
  }
  return status;
}

/**
 * The import task as decisions 2.3 shows it, with the members the service adds; a page of details as
 * asked, and `details_next`, the path of the next page, when more follow.
 */
async function importStatus(
  imports: ImportService,
  task: TaskRow,
  page: DetailsQuery | false,
  path: string,
): Promise<Record<string, unknown>> {
  const status = importListed(task, imports);
  if (task.status === 'pending' || !page) return status;
  const found = await imports.details(task, page);
  status.details = found.details;
  if (found.more) {
    const next = new URLSearchParams({
      offset: String((page.offset ?? 0) + page.limit),
      limit: String(page.limit),
    });
    if (page.outcome) next.set('outcome', page.outcome);
    status.details_next = `${path}?${next}`;
  }
  return status;
}
