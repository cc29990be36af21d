import { koaBody } from 'koa-body';

/** The facade's one body parser: strict JSON (an object or an array) within `limit` bytes, nothing else. */
export function jsonBody(limit: string | number) {
  return koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limit,
    urlencoded: false,
    text: false,
    multipart: false,
  });
}
