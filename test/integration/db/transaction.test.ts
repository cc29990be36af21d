import { expect } from 'chai';
import { withSavepoint, withSnapshot, withTransaction } from '../../../pipeline/db/transaction.js';
import { EngineError } from '../../../pipeline/errors.js';
import { useTestSchema } from '../../support/database.js';

/** What `work` rejected with; fails the test when it resolves. */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  const outcome = await work.then(
    () => undefined,
    (err: unknown) => ({ err }),
  );
  expect(outcome, 'expected a rejection').to.not.equal(undefined);
  return outcome?.err;
}

describe('db/transaction: transactions, snapshots and savepoints', () => {
  const db = useTestSchema();
  const notes = async () =>
    (await db().query<{ note: string }>('SELECT note FROM notes ORDER BY note')).rows.map((r) => r.note);

  before(async () => {
    await db().query('CREATE TABLE notes (note text PRIMARY KEY)');
  });
  beforeEach(async () => {
    await db().query('TRUNCATE notes');
  });

  it('rolls back what a savepoint wrote when its work throws, and the transaction goes on', async () => {
    await withTransaction(db(), async (client) => {
      await client.query(`INSERT INTO notes VALUES ('kept')`);
      const failed = withSavepoint(client, async () => {
        await client.query(`INSERT INTO notes VALUES ('undone')`);
        await client.query(`INSERT INTO notes VALUES ('kept')`); // a unique violation
      });
      expect(String(await rejection(failed))).to.match(/duplicate key/);
      await withSavepoint(client, () => client.query(`INSERT INTO notes VALUES ('after')`));
    });
    expect(await notes()).to.deep.equal(['after', 'kept']);
  });

  it('rolls back a savepoint that is not to be kept, even when its work resolves', async () => {
    const seen = await withTransaction(db(), async (client) => {
      const inside = await withSavepoint(
        client,
        async () => {
          await client.query(`INSERT INTO notes VALUES ('dry')`);
          return (await client.query('SELECT count(*)::int AS n FROM notes')).rows[0]?.n;
        },
        { keep: false },
      );
      await client.query(`INSERT INTO notes VALUES ('real')`);
      return inside;
    });
    expect(seen).to.equal(1);
    expect(await notes()).to.deep.equal(['real']);
  });

  it('reads under the snapshot another transaction exported, and refuses what is not a snapshot id', async () => {
    await db().query(`INSERT INTO notes VALUES ('before')`);
    const seen = await withSnapshot(db(), async (client) => {
      const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
      await db().query(`INSERT INTO notes VALUES ('later')`);
      return withSnapshot(
        db(),
        async (other) => (await other.query('SELECT note FROM notes')).rows.map((r) => r.note),
        { snapshot: rows[0]?.id as string },
      );
    });
    expect(seen).to.deep.equal(['before']);
    const refused = withSnapshot(db(), async () => 0, { snapshot: "1'; DROP TABLE notes; --" });
    expect(await rejection(refused)).to.be.an.instanceOf(EngineError);
    expect(await notes()).to.deep.equal(['before', 'later']);
  });
});
