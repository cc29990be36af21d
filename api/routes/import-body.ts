import type { Middleware } from 'koa';
import { ImportRequestError } from '../errors.js';
import { jsonBody } from '../json-body.js';

/** Spec 8: the request body of an import is at most 500 KB (docs/decisions.md: 500000 bytes). */
export const IMPORT_BODY_LIMIT = 500_000;

const parse = jsonBody(IMPORT_BODY_LIMIT);

/** Parses an import request body, once: JSON only, within the limit, into `ctx.request.body`. */
export const importBody: Middleware = async (ctx, next) => {
  if (!ctx.is('application/json')) throw new ImportRequestError(400, 'Content-Type must be application/json');
  try {
    await parse(ctx, async () => {});
  } catch (err) {
    const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
    if (status === 413)
      throw new ImportRequestError(413, `request body too large (limit ${IMPORT_BODY_LIMIT} bytes)`);
    if (status >= 400 && status < 500) throw new ImportRequestError(400, 'request body is not valid JSON');
    throw err;
  }
  await next();
};
