import { expect } from 'chai';
import { pino } from 'pino';
import { openDatabase } from '../../../pipeline/db/open-database.js';
import { makeTestKeys, testConfig } from '../../support/admin-api.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';

describe('openDatabase', () => {
  const admin = useTestSchema();

  /** A service configuration whose database is the test schema. */
  async function schemaConfig() {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${admin.schema}`);
    return testConfig(await makeTestKeys(), {}, { database_url: url.toString() });
  }

  it('warns when its pool may open more connections than the server allows', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const config = await schemaConfig();
    const { rows } = await admin().query<{ max: number }>(
      `SELECT current_setting('max_connections')::int AS max`,
    );
    const max = rows[0]?.max ?? 0;
    for (const size of [2, max + 1]) {
      const db = await openDatabase(config, log, size);
      await db.close();
    }
    const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings, 'one warning, for the pool too large').to.have.length(1);
    expect(warnings[0]).to.include({
      msg: 'the pool may open more connections than Postgres allows (max_connections)',
      pool_size: max + 1,
    });
    expect(warnings[0]?.allowed_connections)
      .to.be.a('number')
      .and.below(max + 1);
  });

  it('outlives an idle connection the server ends, and serves the next query on a new one', async () => {
    const config = await schemaConfig();
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const db = await openDatabase(config, log, 2);
    try {
      const { rows } = await db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = rows[0]?.pid;
      await admin().query('SELECT pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 100 && db.pool.totalCount > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(db.pool.totalCount, 'the ended connection left the pool').to.equal(0);
      const again = await db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]?.pid).to.be.a('number').and.not.equal(pid);
      expect(lines.map((line) => JSON.parse(line).msg)).to.deep.equal(['database connection lost']);
    } finally {
      await db.close();
    }
  });

  it('migrates outside the embedded default only when told to, and two migrations at once apply each file once', async () => {
    const schema = `${admin.schema}_fresh`;
    await admin().query(`CREATE SCHEMA ${schema}`);
    try {
      const url = new URL(testDatabaseUrl());
      url.searchParams.set('options', `-c search_path=${schema}`);
      const keys = await makeTestKeys();
      const log = pino({ level: 'silent' });
      const tables = async () =>
        (
          await admin().query<{ n: number }>(
            `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1`,
            [schema],
          )
        ).rows[0]?.n;

      const unmigrated = await openDatabase(testConfig(keys, {}, { database_url: url.toString() }), log, 2);
      await unmigrated.close();
      expect(await tables(), 'a service process leaves the schema to `make migrate`').to.equal(0);

      const told = testConfig(keys, {}, { database_url: url.toString(), migrate_on_start: true });
      const [a, b] = await Promise.all([openDatabase(told, log, 2), openDatabase(told, log, 2)]);
      await Promise.all([a.close(), b.close()]);
      const { rows } = await admin().query<{ n: number; distinct: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT version)::int AS distinct FROM ${schema}.schema_migrations`,
      );
      expect(rows[0]?.n).to.equal(rows[0]?.distinct);
      expect(rows[0]?.n).to.be.above(10);
    } finally {
      await admin().query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });
});
