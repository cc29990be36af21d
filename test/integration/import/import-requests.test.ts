import { expect } from 'chai';
import { sweepQueueLog } from '../../../pipeline/db/task-queue.js';
import { createLogger } from '../../../pipeline/log.js';
import { sweepExpiredTasks } from '../../../pipeline/tasks/retention.js';
import { adminToken } from '../../support/admin-api.js';
import { eventually } from '../../support/eventually.js';
import { HTTPS, useImportService } from '../../support/imports.js';

describe('import requests (POST and GET /_api/admin/users/import)', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {}, { task_retention_seconds: 2 });

  const post = async (body: string | undefined, headers: Record<string, string> = HTTPS) =>
    service.client().request({
      method: 'POST',
      url: '/_api/admin/users/import',
      token: await adminToken(service.keys()),
      headers,
      ...(body === undefined ? {} : { body }),
    });

  it('refuses plain HTTP with 400 {error}, on both endpoints', async () => {
    const res = await post(
      JSON.stringify({ identifier: 'email', records: [{ email: 'a@example.com' }] }),
      {},
    );
    expect(res.statusCode).to.equal(400);
    expect(JSON.parse(res.body)).to.deep.equal({ error: 'HTTPS is required' });
    const get = await service.client().request({
      method: 'GET',
      url: '/_api/admin/users/import/userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      token: await adminToken(service.keys()),
    });
    expect(get.statusCode).to.equal(400);
    expect(JSON.parse(get.body)).to.deep.equal({ error: 'HTTPS is required' });
  });

  it('refuses a missing or invalid admin JWT with 403', async () => {
    const res = await service.client().request({
      method: 'POST',
      url: '/_api/admin/users/import',
      headers: HTTPS,
      body: { identifier: 'email', records: [{ email: 'a@example.com' }] },
    });
    expect(res.statusCode).to.equal(403);
  });

  it('refuses a body over 500000 bytes with 413 and stores nothing', async () => {
    const records = Array.from({ length: 6000 }, (_, i) => ({
      email: `big${i}@example.com`,
      name: 'x'.repeat(60),
    }));
    const body = JSON.stringify({ identifier: 'email', records });
    expect(body.length).to.be.greaterThan(500_000);
    const res = await post(body);
    expect(res.statusCode).to.equal(413);
    expect(JSON.parse(res.body)).to.deep.equal({ error: 'request body too large (limit 500000 bytes)' });
    const { rows } = await service.db().query('SELECT count(*)::int AS n FROM tasks');
    expect(rows).to.deep.equal([{ n: 0 }]);
  });

  it('refuses malformed JSON and a non-JSON content type', async () => {
    const bad = await post('{"identifier": "email", "records": [');
    expect(bad.statusCode).to.equal(400);
    expect(JSON.parse(bad.body)).to.deep.equal({ error: 'request body is not valid JSON' });
    const text = await post('identifier=email', { ...HTTPS, 'content-type': 'text/plain' });
    expect(text.statusCode).to.equal(400);
    expect(JSON.parse(text.body)).to.deep.equal({ error: 'Content-Type must be application/json' });
  });

  for (const [body, message] of [
    [{ records: [{ email: 'a@example.com' }] }, "/: must have required property 'identifier'"],
    [{ identifier: 'name', records: [{}] }, '/identifier: must be equal to one of the allowed values'],
    [{ identifier: 'email', records: [] }, '/records: must NOT have fewer than 1 items'],
    [{ identifier: 'email', records: ['a@example.com'] }, '/records/0: must be object'],
    [{ identifier: 'email', upsert: 'yes', records: [{}] }, '/upsert: must be boolean'],
    [{ identifier: 'email', records: [{}], extra: 1 }, '/: must NOT have additional properties'],
  ] as const) {
    it(`refuses ${JSON.stringify(body)} naming the failing location`, async () => {
      const res = await post(JSON.stringify(body));
      expect(res.statusCode).to.equal(400);
      expect(JSON.parse(res.body)).to.deep.equal({ error: message });
    });
  }

  it('shows progress while pending, then summary and details; 404 for an unknown id, 400 for a malformed one', async () => {
    const created = await service.post({ identifier: 'email', records: [{ email: 'p@example.com' }] });
    const { id } = JSON.parse(created.body) as { id: string };
    const pending = await service.status(id);
    if (pending.body.status === 'pending') {
      expect(pending.body.progress).to.deep.equal({ processed: 0, total: 1 });
      expect(pending.body).not.to.have.property('details');
    }
    const unknown = await service.status('userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.statusCode).to.equal(404);
    expect(unknown.body).to.deep.equal({
      error: { name: 'NotFound', reason: 'TaskNotFound', message: 'no such import task', code: 404 },
    });
    const malformed = await service.status('nope');
    expect(malformed.statusCode).to.equal(400);
    expect(malformed.body).to.deep.equal({ error: 'invalid import task id' });
  });

  it('forgets a completed task after retention: TaskNotFound, details and input gone', async () => {
    const done = await service.run({ identifier: 'email', records: [{ email: 'r@example.com' }] });
    expect(Object.keys(done).sort()).to.deep.equal([
      'completed_at',
      'created_at',
      'details',
      'id',
      'status',
      'summary',
    ]);
    const gone = await eventually(
      () => service.status(done.id as string),
      (status) => status.statusCode === 404,
    );
    expect(gone.statusCode).to.equal(404);
    // The sweeper deletes the row, its details and its stored input.
    await sweepExpiredTasks(service.db(), undefined, 2, createLogger('silent'));
    const { rows } = await service.db().query(
      `SELECT (SELECT count(*) FROM tasks WHERE id = $1)::int AS tasks,
              (SELECT count(*) FROM import_details WHERE task_id = $1)::int AS details`,
      [done.id],
    );
    expect(rows).to.deep.equal([{ tasks: 0, details: 0 }]);

    // The import log (the embedded queue) keeps the request past its task, for its own retention.
    const logged = async () =>
      (
        await service
          .db()
          .query('SELECT processed_at IS NOT NULL AS processed FROM task_queue WHERE task_id = $1', [done.id])
      ).rows;
    expect(await logged()).to.deep.equal([{ processed: true }]);
    expect(await sweepQueueLog(service.db(), 3600)).to.equal(0);
    expect(await logged()).to.have.length(1);
    await service
      .db()
      .query(`UPDATE task_queue SET processed_at = processed_at - interval '2 hours' WHERE task_id = $1`, [
        done.id,
      ]);
    expect(await sweepQueueLog(service.db(), 3600)).to.equal(1);
    expect(await logged()).to.deep.equal([]);
  });
});
