import { expect } from 'chai';
import { pino } from 'pino';
import { openDatabase } from '../../../pipeline/db/open-database.js';
import { makeTestKeys, testConfig } from '../../support/admin-api.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';

describe('openDatabase', () => {
  const admin = useTestSchema();

  it('outlives an idle connection the server ends, and serves the next query on a new one', async () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${admin.schema}`);
    const config = testConfig(await makeTestKeys(), {}, { database_url: url.toString() });
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
