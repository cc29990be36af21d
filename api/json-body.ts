import { koaBody } from 'koa-body';

/**
 * The facade's one body parser: strict JSON (an object or an array) within `limit` bytes, nothing
 * else. With `keepText` the text as received stays in `ctx.request.rawBody`.
 */
export function jsonBody(limit: string | number, { keepText = false } = {}) {
  return koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limit,
    includeUnparsed: keepText,
    urlencoded: false,
    text: false,
    multipart: false,
  });
}
