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
});
