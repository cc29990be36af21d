import { expect } from 'chai';
import {
  claimPart,
  type ExportPart,
  finishPart,
  nextRange,
  planPart,
  type UserKey,
  type UserRange,
} from '../../../pipeline/db/export-parts.js';
import { releaseReader, takeReader } from '../../../pipeline/db/export-readers.js';
import { withSnapshot } from '../../../pipeline/db/transaction.js';
import { prepareSnapshot } from '../../../pipeline/export/user-rows.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { useTestSchema } from '../../support/database.js';
import { insertGeneratedUsers } from '../../support/users.js';

// A split export's plan: ranges found one at a time, each by a walk of its own users only, and
// parts claimed under the deployment's cap on export readers.

const USERS = 10_000;
const TIED = 150; // users created at one instant: a range may end inside them
const SIZE = 97;

describe('export part plan', () => {
  const db = useTestSchema();

  before(async () => {
    await insertGeneratedUsers(db(), USERS);
    await db().query(
      `INSERT INTO users (id, project_id, created_at, standard_attributes)
       SELECT gen_random_uuid(), 'default', '2026-01-01T00:00:05Z', jsonb_build_object('email', 'tied' || n || '@example.com')
         FROM generate_series(1, $1) n`,
      [TIED],
    );
    await insertGeneratedUsers(db(), 500, { project: 'other', prefix: 'other' });
  });

  /** Walks the project's users in ranges of `size` under one snapshot: each range, and its users' ids. */
  const walk = (size: number) =>
    withSnapshot(db(), async (client) => {
      await prepareSnapshot(client, 'default');
      const ranges: UserRange[] = [];
      let after: UserKey | undefined;
      do {
        const range = await nextRange(
          client,
          "u.project_id = current_setting('export.project')",
          size,
          after,
        );
        ranges.push(range);
        after = range.through;
      } while (after !== undefined);
      return ranges;
    });

  it('cuts the users into ranges of the size asked, the last one the rest, ties split exactly', async () => {
    const ranges = await walk(SIZE);
    const total = USERS + TIED;
    expect(ranges).to.have.length(Math.ceil(total / SIZE));
    expect(ranges.slice(0, -1).every((r) => r.users === SIZE && r.through !== undefined)).to.equal(true);
    expect(ranges.at(-1)).to.deep.equal({ users: total - SIZE * (ranges.length - 1), through: undefined });
    // Each range ends at the user `SIZE` places after the last one's end, in (created_at, id) order.
    const { rows } = await db().query<UserKey>(
      `SELECT created_at::text AS at, id::text AS id FROM users WHERE project_id = 'default'
        ORDER BY created_at, id`,
    );
    const ends = ranges.slice(0, -1).map((r) => r.through);
    expect(ends).to.deep.equal(ends.map((_, i) => rows[(i + 1) * SIZE - 1]));
    expect(await walk(0), 'no size: one range of every user').to.deep.equal([
      { users: total, through: undefined },
    ]);
    // Users left that fill the range exactly: it is the last, with no empty range after it.
    expect(await walk(total), 'a size of every user').to.deep.equal([{ users: total, through: undefined }]);
    expect(await walk(total / 2), 'two full ranges').to.deep.equal([
      { users: total / 2, through: rows[total / 2 - 1] },
      { users: total / 2, through: undefined },
    ]);
  });

  it('reads only the range it finds, not every user', async () => {
    const read = await withSnapshot(db(), async (client) => {
      // The connection's reads of users not yet sent to the statistics (this transaction's, and
      // those of the connection's earlier ones): index entries of any of its indexes, and rows of
      // the table read by a scan.
      const usersRead = async () => {
        const { rows } = await client.query<{ n: string }>(
          `SELECT (SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = 'users'::regclass)
                + (SELECT coalesce(max(seq_tup_read), 0) FROM pg_stat_xact_user_tables WHERE relid = 'users'::regclass) AS n`,
        );
        return Number(rows[0]?.n ?? 0);
      };
      await prepareSnapshot(client, 'default');
      const before = await usersRead();
      await nextRange(client, "u.project_id = current_setting('export.project')", SIZE, undefined);
      return (await usersRead()) - before;
    });
    expect(read, 'users read').to.be.within(SIZE, SIZE + 1);
  });

  describe('claims under the cap on export readers', () => {
    /** A pending export task with `parts` planned parts, on blob `blob`. */
    async function plannedTask(blob: string, parts: number): Promise<string> {
      const id = newTaskId('export');
      await db().query(
        `INSERT INTO tasks (id, kind, project_id, owner, attempt, lease_until)
         VALUES ($1, 'export', 'default', 'coordinator', 1, clock_timestamp() + interval '1 minute')`,
        [id],
      );
      for (let part = 0; part < parts; part++)
        await planPart(db(), {
          taskId: id,
          blobName: blob,
          snapshot: '00000003-00000002-1',
          coordinator: 'coordinator',
          taskAttempt: 1,
          part,
          onStandby: false,
          after: undefined,
          through: undefined,
        });
      return id;
    }

    const claim = (blob: string, worker: string, readersMax: number) =>
      claimPart(db(), { blobName: blob, worker, leaseMs: 60_000, readersMax, standby: false });

    it('never holds more parts at once than the cap, across every export of the deployment', async () => {
      await plannedTask('cap-a', 12);
      await plannedTask('cap-b', 12);
      // Rounds of twenty claims at once over two exports, three readers at most.
      for (let round = 0; round < 3; round++) {
        await db().query(`UPDATE export_parts SET lease_until = NULL WHERE blob_name LIKE 'cap-%'`);
        const claims = await Promise.all(
          Array.from({ length: 20 }, (_, n) => claim(n % 2 === 0 ? 'cap-a' : 'cap-b', `worker-${n}`, 3)),
        );
        expect(
          claims.filter((c) => c !== undefined),
          `claimed in round ${round}`,
        ).to.have.length(3);
      }
      const held = (
        await db().query<ExportPart>(
          `SELECT blob_name, part, attempt FROM export_parts WHERE lease_until > clock_timestamp()`,
        )
      ).rows;
      expect(held).to.have.length(3);
      expect(await claim('cap-a', 'late', 3), 'none while three are read').to.equal(undefined);
      // A finished part frees its reader; a cap of more readers lets one more in at once.
      expect(
        await finishPart(db(), held[0] as ExportPart, { blockIds: ['b'], processed: 1, bytes: 10 }),
      ).to.equal(true);
      expect(await claim('cap-a', 'late', 3), 'one reader free').to.not.equal(undefined);
      expect(await claim('cap-b', 'later', 3)).to.equal(undefined);
      expect(await claim('cap-b', 'later', 4)).to.not.equal(undefined);
    });

    it("counts a coordinator's reader with the parts", async () => {
      await db().query(`UPDATE export_parts SET lease_until = NULL`);
      const id = await plannedTask('beside-reader', 1);
      expect(
        await takeReader(db(), { taskId: id, holder: 'coordinator', leaseMs: 60_000, readersMax: 1 }),
      ).to.equal(true);
      expect(await claim('beside-reader', 'w1', 1), 'the one reader is the coordinator').to.equal(undefined);
      await releaseReader(db(), { taskId: id, holder: 'coordinator' });
      expect(await claim('beside-reader', 'w1', 1)).to.not.equal(undefined);
      await db().query(`UPDATE export_parts SET lease_until = NULL`);
    });

    it('does not count a part whose lease ran out: its worker died', async () => {
      await plannedTask('expired', 2);
      await db().query(
        `UPDATE export_parts SET lease_until = NULL, block_ids = '{x}' WHERE blob_name LIKE 'cap-%'`,
      );
      expect(await claim('expired', 'w1', 1)).to.not.equal(undefined);
      expect(await claim('expired', 'w2', 1)).to.equal(undefined);
      await db().query(
        `UPDATE export_parts SET lease_until = clock_timestamp() - interval '1 second' WHERE blob_name = 'expired'`,
      );
      const taken = await claim('expired', 'w2', 1);
      expect(taken?.part, 'the lapsed part is taken over').to.equal(0);
    });
  });
});
