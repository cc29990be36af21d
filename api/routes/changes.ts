import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { type ChangesCursor, decodeCursor, encodeCursor } from '../../pipeline/changes/changes-cursor.js';
import type { ChangesPage, ProjectChange } from '../../pipeline/changes/read-changes.js';
import { ApiError } from '../../pipeline/errors.js';
import { scopeOf } from '../project-scope.js';
import { pageLimit, queryValue } from './list-query.js';

const PATH = '/_api/admin/users/changes';
/** The largest page, and the page when the request names none. */
export const MAX_CHANGES_LIMIT = 1_000;
const DEFAULT_CHANGES_LIMIT = 100;
/** How long a read waits for an event when there is none, at most and by default (seconds). */
export const MAX_CHANGES_WAIT_SECONDS = 30;
const DEFAULT_CHANGES_WAIT_SECONDS = 5;
/**
 * How long one Server-Sent Events response lasts: the client reconnects with Last-Event-ID, so a
 * stopping process is never held by a stream, and a stream never outlives its admin JWT by long.
 */
export const CHANGES_STREAM_SECONDS = 60;
/** How long a stream waits for events before it writes a comment that keeps proxies from closing it. */
const STREAM_WAIT_MS = 15_000;

/**
 * GET /_api/admin/users/changes (docs/changes.md): the project's change feed after a cursor, as a
 * page of JSON (a long poll) or, with `Accept: text/event-stream`, as Server-Sent Events whose ids
 * are cursors.
 */
export function changeRoutes(admin: readonly Middleware[]): Router {
  const router = new Router();
  const refuse = (message: string) => new ApiError('BadRequest', message);

  router.get(PATH, ...admin, async (ctx) => {
    const { changes } = scopeOf(ctx);
    const limit = pageLimit(ctx.query, { max: MAX_CHANGES_LIMIT, fallback: DEFAULT_CHANGES_LIMIT }, refuse);
    const token = queryValue(ctx.query, 'after', refuse) ?? ctx.get('Last-Event-ID');
    const after = token ? decodeCursor(token) : await changes.end();
    const closed = new AbortController();
    ctx.req.once('close', () => closed.abort());
    const read = (cursor: ChangesCursor, waitMs: number) =>
      changes.read(cursor, limit, waitMs, closed.signal);

    if (ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream') {
      // The first page is read before the stream begins: a cursor that is expired or invalid
      // is answered with its error, not a stream that ends at once.
      const first = await read(after, 0);
      streamChanges(ctx, first, read, closed);
      return;
    }
    // Without a cursor, the answer is where the feed ends now, at once: the place to start from.
    const waitMs = waitSeconds(ctx, refuse) * 1000;
    const page = await read(after, token ? waitMs : 0);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      events: page.changes.map((c) => c.event),
      next_cursor: encodeCursor(page.next),
    };
  });

  return router;
}

/** `wait`: whole seconds from 0 to MAX_CHANGES_WAIT_SECONDS. */
function waitSeconds(ctx: Context, refuse: (message: string) => Error): number {
  const text = queryValue(ctx.query, 'wait', refuse);
  if (text === undefined) return DEFAULT_CHANGES_WAIT_SECONDS;
  const seconds = /^\d{1,3}$/.test(text) ? Number(text) : -1;
  if (seconds < 0 || seconds > MAX_CHANGES_WAIT_SECONDS)
    throw refuse(`wait must be an integer from 0 to ${MAX_CHANGES_WAIT_SECONDS}`);
  return seconds;
}

/** One event as Server-Sent Events write it: the cursor after it as its id. */
function sseEvent(change: ProjectChange): string {
  return `id: ${encodeCursor(change.cursor)}\nevent: ${change.event.type}\ndata: ${JSON.stringify(change.event)}\n\n`;
}

/**
 * Answers with a stream of the events from `first` on, for CHANGES_STREAM_SECONDS or until the
 * client goes away; a read that fails ends the stream (the client resumes from its last id).
 */
function streamChanges(
  ctx: Context,
  first: ChangesPage,
  read: (cursor: ChangesCursor, waitMs: number) => Promise<ChangesPage>,
  closed: AbortController,
): void {
  const stream = new PassThrough();
  ctx.req.socket.setTimeout(0);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.type = 'text/event-stream';
  ctx.body = stream;
  const ends = Date.now() + CHANGES_STREAM_SECONDS * 1000;
  const timer = setTimeout(() => closed.abort(), CHANGES_STREAM_SECONDS * 1000);
  void (async () => {
    stream.write('retry: 1000\n\n');
    let page = first;
    try {
      for (;;) {
        for (const change of page.changes) stream.write(sseEvent(change));
        if (closed.signal.aborted) break;
        if (page.changes.length === 0) stream.write(': waiting\n\n');
        page = await read(page.next, Math.min(STREAM_WAIT_MS, Math.max(0, ends - Date.now())));
      }
    } catch (err) {
      ctx.app.emit('error', err, ctx);
    } finally {
      clearTimeout(timer);
      stream.end();
    }
  })();
}
