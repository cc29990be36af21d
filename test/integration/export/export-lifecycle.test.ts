import { expect } from 'chai';
import { failAbandonedTasks } from '../../../pipeline/db/tasks/endings.js';
import { offerLapsedTasks } from '../../../pipeline/db/tasks/leases.js';
import { TASK_ENDINGS } from '../../../pipeline/tasks/task-failure.js';
import { adminClient, adminToken, testConfig } from '../../support/admin-api.js';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { eventually } from '../../support/eventually.js';
import { useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { TEST_SIZES } from '../../support/test-sizes.js';
import { insertGeneratedUsers } from '../../support/users.js';

const body = (res: { body: string }) => JSON.parse(res.body) as Record<string, unknown>;

describe('export request bounds', () => {
  const service = useExportService('postgres', { workers: false });

  const refused = async (request: unknown) => {
    const res = await service.post(request);
    expect(res.statusCode, res.body).to.equal(400);
    const error = body(res).error as {
      reason: string;
      info: { causes: { location: string; kind: string }[] };
    };
    expect(error.reason).to.equal('ValidationFailed');
    return error.info.causes.map((c) => [c.location, c.kind]);
  };

  it('refuses more than 200 fields, a field name over 256 characters and a pointer over 512', async () => {
    const fields = Array.from({ length: 201 }, (_, i) => ({ pointer: `/custom_attributes/a${i}` }));
    expect(await refused({ format: 'csv', csv: { fields } })).to.deep.equal([['/csv/fields', 'maxItems']]);
    expect(
      await refused({ format: 'csv', csv: { fields: [{ pointer: '/email', field_name: 'n'.repeat(257) }] } }),
    ).to.deep.equal([['/csv/fields/0/field_name', 'maxLength']]);
    expect(
      await refused({ format: 'csv', csv: { fields: [{ pointer: `/${'p'.repeat(512)}` }] } }),
    ).to.deep.equal([['/csv/fields/0/pointer', 'maxLength']]);
    const atTheBounds = Array.from({ length: 200 }, (_, i) => ({ pointer: `/custom_attributes/a${i}` }));
    atTheBounds[0] = { pointer: `/${'p'.repeat(511)}`, field_name: 'n'.repeat(256) } as never;
    expect((await service.post({ format: 'csv', csv: { fields: atTheBounds } })).statusCode).to.equal(200);
  });
});

describe('export tasks belong to their project', () => {
  const service = useExportService('postgres', { workers: false });

  it('is TaskNotFound from another project on the same database, for exports and imports', async () => {
    const created = body(await service.post({ format: 'ndjson' }));
    // A facade of each project on the same database, both behind a trusted proxy for the import calls.
    const facadeOf = (id: string) =>
      adminClient(
        testConfig(
          service.keys(),
          { id },
          {
            trust_proxy: true,
            azure_storage_connection_string: testBlobConnectionString(),
            azure_storage_container: service.config().export.container,
          },
        ),
        service.db,
        service.keys(),
        undefined,
        service.blobs,
      );
    const other = facadeOf('other');
    const token = await adminToken(service.keys());
    const read = await other.request({ method: 'GET', url: `/_api/admin/users/export/${created.id}`, token });
    expect(read.statusCode).to.equal(404);
    expect((body(read).error as { reason: string }).reason).to.equal('TaskNotFound');
    const cancel = await other.request({
      method: 'DELETE',
      url: `/_api/admin/users/export/${created.id}`,
      token,
    });
    expect(cancel.statusCode).to.equal(404);
    // The other project has its own export slot.
    const own = await other.request({
      method: 'POST',
      url: '/_api/admin/users/export',
      token,
      body: { format: 'csv' },
    });
    expect(own.statusCode, own.body).to.equal(200);

    const imported = await other.request({
      method: 'POST',
      url: '/_api/admin/users/import',
      token,
      headers: HTTPS,
      body: { identifier: 'email', records: [{ email: 'a@x.test' }] },
    });
    const importId = body(imported).id as string;
    const fromDefault = await facadeOf('default').request({
      method: 'GET',
      url: `/_api/admin/users/import/${importId}`,
      token,
      headers: HTTPS,
    });
    expect(fromDefault.statusCode).to.equal(404);
    expect((body(fromDefault).error as { reason: string }).reason).to.equal('TaskNotFound');
    const fromOther = await other.request({
      method: 'GET',
      url: `/_api/admin/users/import/${importId}`,
      token,
      headers: HTTPS,
    });
    expect(fromOther.statusCode).to.equal(200);
  });
});

describe('export cancel', () => {
  const service = useExportService('postgres', {
    workers: false,
    settings: { export_rate_limit: 1, export_rate_limit_period_seconds: 86400 },
  });

  it('ends a pending export Cancelled, frees the slot and gives its token back', async () => {
    const created = body(await service.post({ format: 'csv' }));
    const token = await adminToken(service.keys());
    const res = await service
      .client()
      .request({ method: 'DELETE', url: `/_api/admin/users/export/${created.id}`, token });
    expect(res.statusCode, res.body).to.equal(200);
    const cancelled = body(res);
    expect(cancelled.status).to.equal('completed');
    expect(cancelled.failed_at).to.be.a('string');
    expect(cancelled.error).to.deep.include({ name: 'InternalError', reason: 'Cancelled' });
    expect(cancelled).not.to.have.property('download_url');
    // With one token a day, only the refund lets this one in.
    expect((await service.post({ format: 'csv' })).statusCode).to.equal(200);
    const again = await service
      .client()
      .request({ method: 'DELETE', url: `/_api/admin/users/export/${created.id}`, token });
    expect(again.statusCode).to.equal(400);
    expect((body(again).error as { reason: string }).reason).to.equal('TaskAlreadyCompleted');
  });

  it('keeps the token of an export a worker had taken: create-then-cancel is no way around the limit', async () => {
    const { rows } = await service
      .db()
      .query<{ id: string }>(`SELECT id FROM tasks WHERE kind = 'export' AND status = 'pending'`);
    expect(rows, 'the export the test above let in').to.have.length(1);
    const id = rows[0]?.id;
    await service.db().query('UPDATE tasks SET started_at = clock_timestamp() WHERE id = $1', [id]);
    const token = await adminToken(service.keys());
    const res = await service
      .client()
      .request({ method: 'DELETE', url: `/_api/admin/users/export/${id}`, token });
    expect(res.statusCode, res.body).to.equal(200);
    const next = await service.post({ format: 'csv' });
    expect(next.statusCode, next.body).to.equal(429);
    expect((body(next).error as { reason: string }).reason).to.equal('RateLimited');
  });
});

describe('export cancel while running', function () {
  this.timeout(90_000);
  const service = useExportService('postgres');

  it('stops the worker, discards its blocks and leaves no file', async () => {
    // Enough users that writing them outlasts the 1 s limit several times over.
    await insertGeneratedUsers(service.db(), TEST_SIZES.cancelledExportUsers, { nameLength: 200 });
    const created = body(await service.post({ format: 'ndjson' }));
    const running = await eventually(
      () => service.status(created.id as string),
      (s) => ((s.body.progress as { processed: number } | undefined)?.processed ?? 0) > 0,
    );
    expect(running.body.status, 'the export was cancelled while running').to.equal('pending');
    const token = await adminToken(service.keys());
    const res = await service
      .client()
      .request({ method: 'DELETE', url: `/_api/admin/users/export/${created.id}`, token });
    expect(res.statusCode, res.body).to.equal(200);
    // The worker sees the cancel at its next heartbeat, stops, and discards what it staged.
    const blobs = service.blobs();
    const names = await eventually(
      async () => {
        const staged = await blobs.list('', { uncommitted: true });
        return { staged, progress: (await service.status(created.id as string)).body };
      },
      (v) => v.staged.length === 0,
    );
    expect(names.staged, 'no file, and no staged block left').to.deep.equal([]);
    expect(names.progress.error).to.deep.include({ reason: 'Cancelled' });
    expect(names.progress).not.to.have.property('download_url');
    // And the slot is free for the next export, which completes.
    const next = await service.run({ format: 'csv', csv: { fields: [{ pointer: '/email' }] } });
    expect(next.failed_at).to.equal(undefined);
    expect(await blobs.list()).to.have.length(1);
  });
});

describe('an export no worker takes', function () {
  this.timeout(60_000);
  // No worker at all: the accepted export's message is relayed, but nobody ever starts it.
  const service = useExportService('postgres', { workers: false, settings: { task_lease_seconds: 2 } });

  it("waits, pending, however long it waits (past a lease, past the upkeep's rounds), and holds its slot", async () => {
    const created = body(await service.post({ format: 'csv' }));
    const id = created.id as string;
    // Its message is relayed; then, as the upkeep sees it, an hour passes, and it makes more
    // rounds over the task than a task may lapse.
    await eventually(
      async () =>
        (await service.db().query('SELECT published_at FROM task_outbox WHERE task_id = $1', [id])).rows,
      (rows) => rows[0]?.published_at instanceof Date,
    );
    await service
      .db()
      .query(`UPDATE tasks SET created_at = created_at - interval '1 hour' WHERE id = $1`, [id]);
    const config = service.config();
    for (let round = 0; round <= config.taskMaxLapses; round++) {
      expect(await offerLapsedTasks(service.db(), config.taskMaxLapses)).to.deep.equal([]);
      const ended = await failAbandonedTasks(
        service.db(),
        { maxLapses: config.taskMaxLapses, exportLimitSeconds: config.export.timeLimitSeconds },
        { expired: TASK_ENDINGS.expired(), timedOut: TASK_ENDINGS.timedOut() },
      );
      expect(ended).to.deep.equal([]);
    }
    const waiting = await service.status(id);
    expect(waiting.body.status).to.equal('pending');
    expect(waiting.body).not.to.have.property('error');
    expect((await service.post({ format: 'csv' })).statusCode, 'the slot is held meanwhile').to.equal(429);
  });
});

describe('export past its time limit', function () {
  this.timeout(90_000);
  const service = useExportService('postgres', { settings: { export_time_limit_seconds: 1 } });

  it('ends TaskTimedOut, stops the worker and frees the slot', async () => {
    // Enough users that writing them outlasts the 1 s limit several times over.
    await insertGeneratedUsers(service.db(), TEST_SIZES.timedOutExportUsers, { nameLength: 200 });
    const created = body(await service.post({ format: 'ndjson' }));
    const ended = await eventually(
      () => service.status(created.id as string),
      (s) => s.body.status === 'completed',
    );
    expect(ended.body.error).to.deep.include({ name: 'InternalError', reason: 'TaskTimedOut' });
    expect(ended.body).not.to.have.property('download_url');
    const staged = await eventually(
      () => service.blobs().list('', { uncommitted: true }),
      (names) => names.length === 0,
    );
    expect(staged, 'no file, and no staged block left').to.deep.equal([]);
    expect((await service.post({ format: 'csv' })).statusCode).to.equal(200);
  });
});
