import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createPool, type Pool } from '../../../pipeline/db/pool.js';
import { readFeed } from '../../support/changes.js';
import { standbySchemaUrl } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { download, type ExportService, useExportService } from '../../support/exports.js';
import { insertGeneratedUsers } from '../../support/users.js';

// DATABASE_READ_URL: exports read a hot standby of the database, but only once it has replayed
// past the moment the export was asked for, so that the file holds every write acknowledged
// before the request. The tests pause the real standby's replay to hold it behind.

const USERS = 5_000;

/** The standby's pool on the service's schema, opened and ended with the describe block. */
function useStandby(service: ExportService): () => Pool {
  let standby: Pool | undefined;
  before(() => {
    standby = createPool({ connectionString: standbySchemaUrl(service.db.schema), max: 2 });
  });
  after(async () => {
    await standby?.query('SELECT pg_wal_replay_resume()');
    await standby?.end();
  });
  return () => standby as Pool;
}

/** Stops (`standby-stop`) or starts (`standby`) the test Postgres's standby. */
async function standbyScript(command: 'standby' | 'standby-stop'): Promise<void> {
  await promisify(execFile)('scripts/services/postgres.sh', [command]);
}

/** Runs `work` while the standby replays nothing, and lets it replay again whatever happens. */
async function withReplayPaused<T>(standby: Pool, work: () => Promise<T>): Promise<T> {
  await standby.query('SELECT pg_wal_replay_pause()');
  try {
    return await work();
  } finally {
    await standby.query('SELECT pg_wal_replay_resume()');
  }
}

/** A user written on the primary and acknowledged; the sub of its record in a file. */
async function writeLateUser(service: ExportService, email: string): Promise<string> {
  const { rows } = await service
    .db()
    .query<{ id: string }>(
      `INSERT INTO users (id, project_id, standard_attributes) VALUES (gen_random_uuid(), 'default', jsonb_build_object('email', $1::text)) RETURNING id`,
      [email],
    );
  return rows[0]?.id as string;
}

/** The export's file: the subs of its records. */
async function exportedSubs(status: Record<string, unknown>): Promise<string[]> {
  const { text } = await download(status.download_url as string);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { sub: string }).sub);
}

describe('exports on a hot standby (DATABASE_READ_URL)', function () {
  this.timeout(120_000);
  const service = useExportService('postgres', {
    standby: true,
    settings: { export_part_users: 2_000, export_standby_wait_seconds: 60 },
  });
  const standby = useStandby(service);

  before(async () => {
    await insertGeneratedUsers(service.db(), USERS);
  });

  /** Rows the standby's statements have read so far in this database, as its statistics have them. */
  const standbyReads = async () => {
    const { rows } = await standby().query<{ n: string }>(
      `SELECT pg_stat_clear_snapshot(), tup_returned + tup_fetched AS n FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0]?.n ?? 0);
  };

  it('waits until the standby has replayed past the request, then reads its users there, in parts', async () => {
    const before = await standbyReads();
    const { id, late } = await withReplayPaused(standby(), async () => {
      const late = await writeLateUser(service, 'late@standby.test');
      const res = await service.post({ format: 'ndjson' });
      expect(res.statusCode, res.body).to.equal(200);
      const { id } = JSON.parse(res.body) as { id: string };
      // Held behind, the standby lacks the user; taken by the worker, the export waits rather than
      // read it without, and in a second it has not completed.
      await eventually(
        async () =>
          (await service.db().query('SELECT 1 FROM tasks WHERE id = $1 AND attempt >= 1', [id])).rows,
        (rows) => rows.length === 1,
        10,
      );
      const body = await eventually(
        async () => (await service.status(id)).body,
        (b) => b.status !== 'pending',
        1,
      );
      expect(body.status, 'the export waits for the standby').to.equal('pending');
      const { rows } = await standby().query('SELECT 1 FROM users WHERE id = $1', [late]);
      expect(rows, 'the paused standby lacks the late user').to.have.length(0);
      return { id, late };
    });
    const status = await service.waitForCompletion(id);
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const subs = await exportedSubs(status);
    expect(subs, 'every user once').to.have.length(USERS + 1);
    expect(new Set(subs).size).to.equal(USERS + 1);
    expect(subs, 'the user written before the request').to.include(late);
    // Its records were read there: the standby's statements read at least every user.
    const read = await eventually(standbyReads, (n) => n - before >= USERS, 20);
    expect(read - before, 'rows read on the standby').to.be.at.least(USERS);
    // The snapshot taken on the standby names where the change feed goes on: the user written
    // before the request is in the file and not after the cursor; one written now is.
    const next = await writeLateUser(service, 'next@standby.test');
    const { events } = await eventually(
      () => readFeed(service.client(), service.keys(), status.changes_cursor as string),
      (feed) => feed.events.length > 0,
      20,
    );
    expect(events.map((e) => [e.type, e.user_id])).to.deep.equal([['user.created', next]]);
  });
});

describe('exports when the standby stays behind', function () {
  this.timeout(120_000);
  const service = useExportService('postgres', {
    standby: true,
    settings: { export_standby_wait_seconds: 1 },
  });
  const standby = useStandby(service);

  before(async () => {
    await insertGeneratedUsers(service.db(), 100);
  });

  it('reads the primary while the standby is down, and the standby again once it is back', async () => {
    await standbyScript('standby-stop');
    try {
      const late = await writeLateUser(service, 'down@standby.test');
      const status = await service.run({ format: 'ndjson' });
      expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
      expect(await exportedSubs(status)).to.include(late);
    } finally {
      await standbyScript('standby');
    }
    const { rows } = await eventually(
      () =>
        standby().query('SELECT 1 FROM users WHERE standard_attributes->>$1 = $2', [
          'email',
          'down@standby.test',
        ]),
      (r) => r.rows.length === 1,
      30,
    );
    expect(rows, 'the standby streams again').to.have.length(1);
  });

  it('reads the primary after its wait: the file still holds every write before the request', async () => {
    await withReplayPaused(standby(), async () => {
      const late = await writeLateUser(service, 'behind@standby.test');
      const res = await service.post({ format: 'ndjson' });
      expect(res.statusCode, res.body).to.equal(200);
      const status = await service.waitForCompletion((JSON.parse(res.body) as { id: string }).id);
      expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
      const subs = await exportedSubs(status);
      const { rows } = await service.db().query<{ n: number }>('SELECT count(*)::int AS n FROM users');
      expect(subs, 'every user of the primary').to.have.length(rows[0]?.n as number);
      expect(subs).to.include(late);
    });
  });
});
