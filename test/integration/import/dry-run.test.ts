import { expect } from 'chai';
import { claimTask } from '../../../pipeline/db/tasks/leases.js';
import { dryRun } from '../../../pipeline/import/dry-run.js';
import { adminToken } from '../../support/admin-api.js';
import { useImportService } from '../../support/imports.js';

type Detail = {
  index: number;
  outcome: string;
  user_id?: string;
  record: unknown;
  warnings?: unknown[];
  errors?: { reason: string; info?: Record<string, unknown> }[];
};

/** What the database holds of the users, for a before/after comparison. */
const SNAPSHOT = `SELECT (SELECT count(*) FROM users)::int AS users,
                         (SELECT count(*) FROM identities)::int AS identities,
                         (SELECT count(*) FROM authenticators)::int AS authenticators,
                         (SELECT coalesce(json_agg(standard_attributes ORDER BY created_at), '[]') FROM users) AS attributes`;

// A dry run plans the request against the current data, batch by batch as a real run does, and
// writes nothing but its details.
describe('import: dry run', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {}, { import_batch_size: 2 });
  const records = [
    {
      email: 'new@dry.test',
      name: 'New',
      password: {
        type: 'bcrypt',
        password_hash: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy',
      },
    },
    { email: 'existing@dry.test', name: 'Changed' },
    { email: 'banned@dry.test', name: 'Banned' }, // refused by the database, in the second batch
    { email: 'NEW@dry.test', name: 'Again' }, // sees record 0, applied by the first batch
    { email: 'not-an-email' },
  ];

  before(async () => {
    await service
      .db()
      .query(
        `ALTER TABLE users ADD CONSTRAINT no_banned_name CHECK (standard_attributes->>'name' <> 'Banned')`,
      );
    const seeded = await service.run({
      identifier: 'email',
      records: [{ email: 'existing@dry.test', name: 'Old' }],
    });
    expect(seeded.summary).to.deep.include({ inserted: 1 });
  });

  it('writes nothing, and details what a real run of the same request then does', async () => {
    const before = (await service.db().query(SNAPSHOT)).rows[0];
    const dry = await service.run({ identifier: 'email', upsert: true, dry_run: true, records });
    expect(dry.failed_at, JSON.stringify(dry.error)).to.equal(undefined);
    expect((await service.db().query(SNAPSHOT)).rows[0], 'nothing written').to.deep.equal(before);
    expect(dry.summary).to.deep.equal({
      total: 5,
      inserted: 0,
      updated: 0,
      skipped: 0,
      failed: 2,
      warnings: 1,
      would_insert: 1,
      would_update: 2,
      would_skip: 0,
    });
    const dryDetails = dry.details as Detail[];
    expect(dryDetails.map((d) => d.outcome)).to.deep.equal([
      'would_insert',
      'would_update',
      'failed',
      'would_update',
      'failed',
    ]);
    expect(dryDetails[2]?.errors?.[0]).to.deep.include({
      reason: 'RecordRefused',
      info: { sqlstate: '23514' },
    });
    expect(dryDetails[0]?.record).to.deep.include({
      password: { type: 'bcrypt', password_hash: 'REDACTED' },
    });

    const real = await service.run({ identifier: 'email', upsert: true, records });
    const realDetails = real.details as Detail[];
    const would: Record<string, string> = {
      inserted: 'would_insert',
      updated: 'would_update',
      skipped: 'would_skip',
    };
    // The same details, but for the ids of the users a run creates (each run makes its own).
    const comparable = (d: Detail, created: boolean) => ({ ...d, user_id: created ? 'new user' : d.user_id });
    expect(dryDetails.map((d) => comparable(d, d.outcome === 'would_insert' || d.index === 3))).to.deep.equal(
      realDetails.map((d) =>
        comparable(
          { ...d, outcome: would[d.outcome] ?? d.outcome },
          d.outcome === 'inserted' || d.index === 3,
        ),
      ),
    );
    expect(realDetails[3]?.user_id, 'the repeat updates the user record 0 created').to.equal(
      realDetails[0]?.user_id,
    );
    expect((await service.db().query(SNAPSHOT)).rows[0].users).to.equal(before.users + 1);
  });

  it('reads the users it matches without locking them: an import holding one does not stall it', async () => {
    const holder = await service.db().connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `SELECT id FROM users WHERE standard_attributes->>'email' = 'existing@dry.test' FOR UPDATE`,
      );
      const dry = await service.run({
        identifier: 'email',
        dry_run: true,
        records: [{ email: 'existing@dry.test', name: 'Read only' }],
      });
      expect(dry.summary).to.deep.include({ would_skip: 1 });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it('details a skip without upsert, and pages the details by a dry outcome', async () => {
    const dry = await service.run({
      identifier: 'email',
      dry_run: true,
      records: [{ email: 'existing@dry.test' }, { email: 'other@dry.test' }],
    });
    expect((dry.details as Detail[]).map((d) => d.outcome)).to.deep.equal(['would_skip', 'would_insert']);
    expect(dry.summary).to.deep.include({ would_skip: 1, would_insert: 1, skipped: 0, inserted: 0 });
    const res = await service.client().request({
      method: 'GET',
      url: `/_api/admin/users/import/${dry.id}?outcome=would_insert`,
      token: await adminToken(service.keys()),
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(res.statusCode, res.body).to.equal(200);
    expect((JSON.parse(res.body).details as Detail[]).map((d) => d.index)).to.deep.equal([1]);
    const { rows } = await service
      .db()
      .query(`SELECT count(*)::int AS n FROM users WHERE standard_attributes->>'email' = 'other@dry.test'`);
    expect(rows).to.deep.equal([{ n: 0 }]);
  });
});

// The bus delivers at least once: a second attempt at a dry run whose details an earlier attempt
// stored (and died before completing the task) keeps those details and plans nothing again.
describe('import: a dry run delivered twice', () => {
  const service = useImportService('postgres', {}, {}, { workers: false });

  it('keeps the first attempt details and does not run again', async () => {
    const res = await service.post({
      identifier: 'email',
      dry_run: true,
      records: [{ email: 'twice@dry.test' }],
    });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    const detail = { index: 0, outcome: 'inserted' as const, record: { email: 'twice@dry.test' } };
    const claimed = await claimTask(service.db(), 'import', id, {
      owner: 'test',
      leaseMs: 60_000,
      runningTasksLimit: 0,
    });
    if (!claimed) throw new Error('the task was not claimed');
    let runs = 0;
    const attempt = () =>
      dryRun(service.db(), claimed, 60_000, async (target) => {
        runs++;
        await target.atomic((client) => target.keep(client, [detail], 1));
      });
    await attempt();
    await attempt();
    expect(runs).to.equal(1);
    const { rows } = await service
      .db()
      .query('SELECT index, outcome FROM import_details WHERE task_id = $1', [id]);
    expect(rows).to.deep.equal([{ index: 0, outcome: 'would_insert' }]);
  });

  it('leaves the task row free while it runs: lease renewals and the upkeep never wait on it', async () => {
    const res = await service.post({
      identifier: 'email',
      dry_run: true,
      records: [{ email: 'free@dry.test' }],
    });
    const { id } = JSON.parse(res.body) as { id: string };
    const claimed = await claimTask(service.db(), 'import', id, {
      owner: 'test',
      leaseMs: 60_000,
      runningTasksLimit: 0,
    });
    if (!claimed) throw new Error('the task was not claimed');
    let rowWasFree = false;
    await dryRun(service.db(), claimed, 60_000, async () => {
      // Another connection, as the task's lease renewal or the upkeep would take it.
      const { rows } = await service.db().query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE NOWAIT', [id]);
      rowWasFree = rows.length === 1;
    });
    expect(rowWasFree).to.equal(true);
  });
});
