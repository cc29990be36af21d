import { expect } from 'chai';
import {
  applyEvents,
  createWriterRoles,
  exportedUsers,
  followFeed,
  importEndpoints,
  runWriters,
} from '../../support/changes.js';
import { useExportService } from '../../support/exports.js';

// The guarantee of the change feed (docs/changes.md): an export, and then the feed from the
// export's changes_cursor applied to the export's users, give what an export taken afterwards
// gives, user for user, whatever the writers did while the export ran.
const ROUNDS = 5;

describe('change feed: an export plus its feed equals a later export', function () {
  this.timeout(300_000);
  const service = useExportService('postgres', { settings: { trust_proxy: true } });
  const imports = importEndpoints(service.client, service.keys);

  before(async () => {
    await createWriterRoles(service.db(), service.config().project.id);
    await imports.run({
      identifier: 'email',
      records: Array.from({ length: 400 }, (_, i) => ({ email: `u${i}@example.com`, name: `first ${i}` })),
    });
  });

  for (let round = 1; round <= ROUNDS; round++) {
    it(`converges while imports, role changes, out-of-order commits and deletions run (round ${round})`, async () => {
      let stopWriters!: () => void;
      const stop = new Promise<void>((resolve) => {
        stopWriters = resolve;
      });
      const errors: unknown[] = [];
      const writing = runWriters(service.db(), imports, service.config().project.id, stop, (err) =>
        errors.push(err),
      );
      // The export begins while the writers are at work; a consumer follows the feed from its
      // cursor while they go on, in pages of a few events, as the commits come.
      await new Promise((resolve) => setTimeout(resolve, 100 + round * 50));
      const exported = await service.run({ format: 'ndjson' });
      expect(exported.changes_cursor, 'a completed export names its cursor').to.be.a('string');
      const following = followFeed(
        service.client(),
        service.keys(),
        exported.changes_cursor as string,
        writing.then(() => {}),
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      stopWriters();
      const writes = await writing;
      const events = await following;
      expect(errors, 'no writer failed').to.deep.equal([]);
      expect(writes.imports + writes.outOfOrder + writes.deletions, 'the writers wrote').to.be.greaterThan(3);
      expect(events.length, 'the feed carried the changes after the snapshot').to.be.greaterThan(0);

      // None before the cursor: no event is of a transaction the export's snapshot holds.
      const { rows } = await service.db().query<{ held: number }>(
        `SELECT count(*)::int AS held FROM tasks t, unnest($2::text[]) e(id)
          WHERE t.id = $1 AND pg_visible_in_snapshot(split_part(e.id, '-', 1)::xid8, t.changes_snapshot)`,
        [exported.id, events.map((e) => e.id)],
      );
      expect(rows[0]?.held, 'events of changes the export holds').to.equal(0);
      const applied = applyEvents(await exportedUsers(exported), events);

      const fresh = await exportedUsers(await service.run({ format: 'ndjson' }));
      expect(applied.size, 'as many users').to.equal(fresh.size);
      for (const [id, record] of fresh) expect(applied.get(id), `user ${id}`).to.deep.equal(record);
    });
  }
});
