import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { withClient } from '../../../pipeline/db/pool.js';
import { streamRows } from '../../../pipeline/db/row-stream.js';
import { useTestSchema } from '../../support/database.js';

describe('db/row-stream: a cursor stream whose connection breaks fails its reader', () => {
  const db = useTestSchema();

  it("rejects the reader's pipeline soon after its backend is terminated, with the connection's error", async () => {
    const outcome = await withClient(db(), async (client) => {
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const rows = streamRows(client, 'SELECT n FROM generate_series(1, 10000000) n', [], 100);
      let read = 0;
      const reader = new Writable({
        objectMode: true,
        highWaterMark: 1,
        write(_row, _enc, done) {
          read += 1;
          // A reader that waits (an upload), while another session ends the connection.
          if (read === 500)
            db()
              .query('SELECT pg_terminate_backend($1)', [pid])
              .then(() => setTimeout(done, 200), done);
          else done();
        },
      });
      const started = Date.now();
      const settled = await Promise.race([
        pipeline(rows, reader).then(
          () => 'resolved',
          (err: Error) => `rejected: ${err.message}`,
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 15_000)),
      ]);
      return { settled, ms: Date.now() - started, read };
    });
    expect(outcome.settled).to.match(/^rejected: /);
    expect(outcome.read).to.be.below(10_000_000);
  });
});
