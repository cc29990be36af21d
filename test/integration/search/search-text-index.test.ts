import { expect } from 'chai';
import { alignSearchTextIndex } from '../../../pipeline/db/migrate.js';
import { useTestSchema } from '../../support/database.js';

/**
 * The Postgres trigram index of users(searchKeyword) is kept only where Postgres serves the
 * search: dropped when ClickHouse is configured, built again (valid) when it is not.
 */
describe('the trigram index follows where search is served', () => {
  const db = useTestSchema();

  const index = async () => {
    const { rows } = await db().query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'users_search_text' AND c.relnamespace = current_schema()::regnamespace`,
    );
    return rows[0];
  };

  it('drops it for ClickHouse and builds it again for Postgres, writes going on', async () => {
    expect(await index(), 'built by the migrations').to.deep.equal({ valid: true });
    expect(await alignSearchTextIndex(db(), 'clickhouse')).to.equal('done');
    expect(await index(), 'dropped with ClickHouse configured').to.equal(undefined);
    expect(await alignSearchTextIndex(db(), 'clickhouse'), 'again: nothing to do').to.equal('done');
    await db().query(
      `INSERT INTO users (id, standard_attributes) VALUES (gen_random_uuid(), '{"name": "Ada Lovelace"}')`,
    );
    expect(await alignSearchTextIndex(db(), 'postgres')).to.equal('done');
    expect(await index(), 'built again, valid').to.deep.equal({ valid: true });
    const client = await db().connect();
    try {
      // One user: only with sequential scans off does the planner show that the index answers.
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query(
        `EXPLAIN SELECT id FROM users WHERE user_search_text(standard_attributes, id) LIKE '%lovelace%'`,
      );
      await client.query('RESET enable_seqscan');
      expect(rows.map((r) => Object.values(r)[0]).join('\n')).to.include('users_search_text');
    } finally {
      client.release();
    }
  });
});
