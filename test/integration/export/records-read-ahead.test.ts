import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { withSnapshot } from '../../../pipeline/db/transaction.js';
import { COPY_BYTES_AHEAD } from '../../../pipeline/export/stage-marks.js';
import { prepareSnapshot, streamUserRows } from '../../../pipeline/export/user-rows.js';
import { useTestSchema } from '../../support/database.js';
import { insertGeneratedUsers } from '../../support/users.js';

// The worker reads the records statement ahead of its assembly, so that Postgres goes on writing
// while the worker is busy, and no further, so that a slow store cannot grow the worker's memory.

/** Users whose COPY text is about twice the read-ahead. */
const USERS = 40_000;
/** What one read of the socket may add past the read-ahead before the stream stops reading. */
const ONE_READ = 256 * 1024;

describe('the records statement, read ahead of the worker', () => {
  const db = useTestSchema();
  before(() => insertGeneratedUsers(db(), USERS, { nameLength: 100 }));

  it('takes COPY text up to its read-ahead while nothing consumes it, then stops reading', async () => {
    await withSnapshot(db(), async (client) => {
      await prepareSnapshot(client, 'default');
      const rows = streamUserRows(client) as Readable;
      rows.read(0); // starts reading, as a pipe's first pull does, and takes nothing
      const deadline = Date.now() + 10_000;
      while (rows.readableLength < COPY_BYTES_AHEAD && Date.now() < deadline) await sleep(20);
      expect(rows.readableLength, 'bytes read ahead').to.be.at.least(COPY_BYTES_AHEAD);
      await sleep(300);
      expect(rows.readableLength, 'bytes read ahead, once it stopped').to.be.at.most(
        COPY_BYTES_AHEAD + ONE_READ,
      );
      let bytes = 0;
      for await (const chunk of rows) bytes += (chunk as Buffer).length;
      expect(bytes, 'the whole statement, read to its end').to.be.greaterThan(2 * COPY_BYTES_AHEAD);
    });
  });
});
