import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createPool } from '../../../pipeline/db/pool.js';
import { ApiError, classifyFault } from '../../../pipeline/errors.js';
import { testDatabaseUrl } from '../../support/database.js';

describe('db/pool', () => {
  it('answers a query that finds every connection busy as the database unavailable (503), not a bug', async () => {
    const pool = createPool({ connectionString: testDatabaseUrl(), max: 1, connectTimeoutMs: 100 });
    const held = await pool.connect();
    try {
      let caught: unknown;
      await pool.query('SELECT 1').catch((err: unknown) => {
        caught = err;
      });
      expect(caught).to.be.instanceOf(ApiError);
      expect((caught as ApiError).status).to.equal(503);
      expect(classifyFault(caught)).to.deep.include({ kind: 'transient', dependency: 'database' });
    } finally {
      held.release();
      await pool.end();
    }
  });

  it('keeps the code of a connection failure that has one', async () => {
    const url = new URL(testDatabaseUrl());
    url.port = '1'; // nothing listens there
    const pool = createPool({ connectionString: url.toString(), max: 1 });
    let caught: unknown;
    await pool.query('SELECT 1').catch((err: unknown) => {
      caught = err;
    });
    await pool.end();
    expect((caught as { code?: string }).code).to.equal('ECONNREFUSED');
  });

  it('ends a statement that runs past the pool statement timeout', async () => {
    const pool = createPool({ connectionString: testDatabaseUrl(), max: 1, statementTimeoutMs: 100 });
    let caught: unknown;
    await pool.query('SELECT pg_sleep(5)').catch((err: unknown) => {
      caught = err;
    });
    await pool.end();
    expect((caught as { code?: string }).code).to.equal('57014'); // query_canceled
  });

  it('turns TCP keepalive on for its connections, as the kernel shows them', async () => {
    const timers = async (pool: ReturnType<typeof createPool>) => {
      const client = await pool.connect();
      try {
        const { rows } = await client.query<{ port: number }>('SELECT inet_client_port() AS port');
        const { stdout } = await promisify(execFile)('ss', [
          '-tnoH',
          'state',
          'established',
          `( sport = :${rows[0]?.port} )`,
        ]);
        return stdout;
      } finally {
        client.release();
        await pool.end();
      }
    };
    const url = testDatabaseUrl();
    expect(await timers(createPool({ connectionString: url, max: 1, keepaliveSeconds: 30 }))).to.match(
      /timer:\(keepalive,/,
    );
    expect(await timers(createPool({ connectionString: url, max: 1 }))).not.to.match(/timer:\(keepalive,/);
  });
});
