import type { Readable } from 'node:stream';
import QueryStream from 'pg-query-stream';
import type { PoolClient } from './pool.js';

/** How long closing a cursor may wait for the server's answer before the stream gives up on it. */
const CLOSE_DEADLINE_MS = 5_000;

/**
 * pg-query-stream's stream whose destroy always settles. Its own `_destroy` closes the cursor and
 * waits for the server's ReadyForQuery; after the connection broke (a server restart, a failover,
 * pg_terminate_backend) that answer never comes, so the stream never finished destroying, never
 * emitted its error, and whatever read it waited forever. A cursor that already failed needs no
 * close; any other close is bounded.
 */
class SettlingQueryStream extends QueryStream {
  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    const cursor = this.cursor as unknown as { state: string };
    if (cursor.state === 'error') {
      done(err);
      return;
    }
    let settled = false;
    const settle = (closeErr?: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      done(closeErr ?? err);
    };
    const deadline = setTimeout(() => settle(err), CLOSE_DEADLINE_MS);
    // pg-query-stream types its error as always present; Node passes null on a plain destroy().
    super._destroy(err as Error, settle);
  }
}

/** The rows of a statement, streamed through a cursor `batchSize` at a time, on the caller's client. */
export function streamRows(client: PoolClient, text: string, values: unknown[], batchSize: number): Readable {
  return client.query(new SettlingQueryStream(text, values, { batchSize }));
}
