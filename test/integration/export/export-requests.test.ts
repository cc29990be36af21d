import { expect } from 'chai';
import { adminToken } from '../../support/admin-api.js';
import { eventually } from '../../support/eventually.js';
import { download, useExportService } from '../../support/exports.js';
import { createUser } from '../../support/users.js';

const body = (res: { body: string }) => JSON.parse(res.body) as Record<string, unknown>;

describe('export requests: validation, field names and errors', () => {
  const service = useExportService('postgres', { workers: false });

  const invalid: [string, unknown, { location: string; kind: string }[]][] = [
    ['no format', {}, [{ location: '', kind: 'required' }]],
    ['an unknown format', { format: 'xml' }, [{ location: '/format', kind: 'enum' }]],
    ['an unknown member', { format: 'csv', extra: 1 }, [{ location: '', kind: 'additionalProperties' }]],
    [
      'fields that are not an array',
      { format: 'csv', csv: { fields: {} } },
      [{ location: '/csv/fields', kind: 'type' }],
    ],
    [
      'an empty field list',
      { format: 'csv', csv: { fields: [] } },
      [{ location: '/csv/fields', kind: 'minItems' }],
    ],
    [
      'a field without pointer',
      { format: 'csv', csv: { fields: [{ field_name: 'x' }] } },
      [{ location: '/csv/fields/0', kind: 'required' }],
    ],
    [
      'a pointer without a token',
      { format: 'csv', csv: { fields: [{ pointer: '' }] } },
      [{ location: '/csv/fields/0/pointer', kind: 'pattern' }],
    ],
    [
      'a pointer with a bad escape',
      { format: 'csv', csv: { fields: [{ pointer: '/a~2' }] } },
      [{ location: '/csv/fields/0/pointer', kind: 'pattern' }],
    ],
    [
      'an empty field name',
      { format: 'csv', csv: { fields: [{ pointer: '/sub', field_name: '' }] } },
      [{ location: '/csv/fields/0/field_name', kind: 'minLength' }],
    ],
  ];
  for (const [what, request, causes] of invalid) {
    it(`refuses ${what} with Invalid/ValidationFailed and its causes`, async () => {
      const res = await service.post(request);
      expect(res.statusCode).to.equal(400);
      const error = body(res).error as Record<string, unknown>;
      expect(error).to.deep.include({
        name: 'Invalid',
        reason: 'ValidationFailed',
        message: 'invalid request body',
        code: 400,
      });
      const got = (error.info as { causes: { location: string; kind: string }[] }).causes;
      expect(got.map(({ location, kind }) => ({ location, kind }))).to.deep.equal(causes);
    });
  }

  it('refuses non-unique field names, given or derived, listing every name in request order', async () => {
    const res = await service.post({
      format: 'csv',
      csv: { fields: [{ pointer: '/email' }, { pointer: '/a/b' }, { pointer: '/sub', field_name: 'a.b' }] },
    });
    expect(res.statusCode).to.equal(400);
    expect(body(res)).to.deep.equal({
      error: {
        name: 'Invalid',
        reason: 'UserExportNonUniqueFieldNames',
        message: 'field names are not unique',
        code: 400,
        info: { field_names: ['email', 'a.b', 'a.b'] },
      },
    });
  });

  it('refuses a body that is not JSON, or not sent as JSON', async () => {
    const token = await adminToken(service.keys());
    const notJson = await service
      .client()
      .request({ method: 'POST', url: '/_api/admin/users/export', token, body: '{"format":' });
    expect(notJson.statusCode).to.equal(400);
    expect(body(notJson).error).to.deep.include({ name: 'Invalid', reason: 'BadRequest' });
    const text = await service.client().request({
      method: 'POST',
      url: '/_api/admin/users/export',
      token,
      body: 'format=csv',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).to.equal(400);
    expect(body(text).error).to.deep.include({ name: 'Invalid', reason: 'BadRequest' });
  });

  it('answers an unknown or malformed task id with TaskNotFound', async () => {
    for (const id of [
      'userexport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'nope',
    ]) {
      const res = await service.status(id);
      expect(res.statusCode).to.equal(404);
      expect(res.body).to.deep.equal({
        error: { name: 'NotFound', reason: 'TaskNotFound', message: 'no such export task', code: 404 },
      });
    }
  });

  it('refuses a missing admin token with 403 before reading the body', async () => {
    const res = await service
      .client()
      .request({ method: 'POST', url: '/_api/admin/users/export', body: { format: 'csv' } });
    expect(res.statusCode).to.equal(403);
  });

  it('accepts a valid request: pending with progress, and nothing else', async () => {
    const res = await service.post({ format: 'csv', csv: { fields: [{ pointer: '/sub' }] } });
    expect(res.statusCode).to.equal(200);
    const created = body(res);
    expect(created).to.have.keys('id', 'created_at', 'status');
    expect(created.id).to.match(/^userexport_[A-Z2-7]{32}$/);
    expect(created.status).to.equal('pending');
    const status = await service.status(created.id as string);
    expect(status.body).to.deep.equal({ ...created, progress: { processed: 0, total: 0 } });
  });
});

describe('export limits: one running export, the UserExport bucket', () => {
  const service = useExportService('postgres', {
    workers: false,
    settings: { export_rate_limit: 2, export_rate_limit_period_seconds: 3600 },
  });

  it('refuses a second export while one is pending (MaximumConcurrentJobLimitExceeded)', async () => {
    expect((await service.post({ format: 'csv' })).statusCode).to.equal(200);
    const second = await service.post({ format: 'ndjson' });
    expect(second.statusCode).to.equal(429);
    expect(body(second)).to.deep.equal({
      error: {
        name: 'TooManyRequest',
        reason: 'MaximumConcurrentJobLimitExceeded',
        message: 'an export is already running',
        code: 429,
      },
    });
  });

  it('refuses an export over the rate limit (RateLimited, bucket UserExport, Retry-After)', async () => {
    await service.db().query(`UPDATE tasks SET status = 'completed', completed_at = clock_timestamp()`);
    expect((await service.post({ format: 'csv' })).statusCode).to.equal(200); // the bucket's second token
    await service.db().query(`UPDATE tasks SET status = 'completed', completed_at = clock_timestamp()`);
    const third = await service.post({ format: 'csv' });
    expect(third.statusCode).to.equal(429);
    expect(body(third)).to.deep.equal({
      error: {
        name: 'TooManyRequest',
        reason: 'RateLimited',
        message: 'too many exports requested',
        code: 429,
        info: { bucket_name: 'UserExport' },
      },
    });
    // 2 tokens per hour: the next one is at most half an hour away.
    const retryAfter = Number(third.headers['retry-after']);
    expect(retryAfter).to.be.within(1, 1800);
    const { rows } = await service.db().query(`SELECT count(*)::int AS n FROM tasks WHERE kind = 'export'`);
    expect(rows).to.deep.equal([{ n: 2 }]);
  });
});

describe('export requests with an Idempotency-Key', () => {
  const service = useExportService('postgres', {
    workers: false,
    settings: { export_rate_limit: 1, export_rate_limit_period_seconds: 3600 },
  });
  const KEY = { 'idempotency-key': 'nightly-2026-11-24' };

  it('answers the first task to the same key and body, before the limits, and refuses another body (422)', async () => {
    const first = await service.post({ format: 'csv', disabled: false }, KEY);
    expect(first.statusCode).to.equal(200);
    // The same JSON in other spacing and order of members is the same request; the one running
    // export and the spent token of the bucket do not refuse it.
    const again = await service.post(JSON.parse('{ "disabled": false,  "format": "csv" }'), KEY);
    expect(again.statusCode, again.body).to.equal(200);
    expect(body(again)).to.deep.equal(body(first));

    const other = await service.post({ format: 'ndjson' }, KEY);
    expect(other.statusCode).to.equal(422);
    expect(body(other)).to.deep.equal({
      error: {
        name: 'UnprocessableEntity',
        reason: 'IdempotencyKeyReused',
        message: 'this Idempotency-Key was sent with another request body',
        code: 422,
      },
    });
    const { rows } = await service.db().query(`SELECT count(*)::int AS n FROM tasks WHERE kind = 'export'`);
    expect(rows).to.deep.equal([{ n: 1 }]);

    const malformed = await service.post({ format: 'csv' }, { 'idempotency-key': 'with space' });
    expect(malformed.statusCode).to.equal(400);
    expect(body(malformed).error).to.deep.include({
      name: 'Invalid',
      reason: 'BadRequest',
      message: 'Idempotency-Key must be 1 to 200 visible ASCII characters',
    });
  });
});

describe('export switched off (UserExportDisabled)', () => {
  const off = useExportService('postgres', { workers: false, settings: { export_enabled: false } });

  it('answers both endpoints with InternalError/UserExportDisabled', async () => {
    const expected = {
      error: {
        name: 'InternalError',
        reason: 'UserExportDisabled',
        message: 'user export is disabled',
        code: 500,
      },
    };
    const post = await off.post({ format: 'csv' });
    expect(post.statusCode).to.equal(500);
    expect(body(post)).to.deep.equal(expected);
    const get = await off.status('userexport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(get.statusCode).to.equal(500);
    expect(get.body).to.deep.equal(expected);
  });
});

describe('export download URLs and retention', () => {
  const service = useExportService('postgres', {
    settings: { export_download_url_seconds: 2, task_retention_seconds: 4, export_max_concurrent: 2 },
  });

  it('signs a fresh read-only URL on every read, for that one file, that stops working after its validity', async () => {
    await createUser(service.db(), service.config().project, { email: 'u@example.com' });
    const first = await service.run({ format: 'csv', csv: { fields: [{ pointer: '/email' }] } });
    const second = await service.run({ format: 'ndjson' });
    const url = first.download_url as string;
    expect((await download(url)).text).to.equal('email\nu@example.com\n');
    const again = (await service.status(first.id as string)).body.download_url as string;
    expect(again).to.be.a('string');
    expect(new URL(again).searchParams.get('sp')).to.equal('r');

    // The signature covers one blob: pointing it at the other file is refused.
    const otherName = new URL(second.download_url as string).pathname.split('/').pop() as string;
    const forged = new URL(url);
    forged.pathname = forged.pathname.replace(/[^/]+$/, otherName);
    expect((await download(forged.toString())).status).to.equal(403);
    // Writing through it is refused too.
    expect(
      (await fetch(url, { method: 'PUT', body: 'x', headers: { 'x-ms-blob-type': 'BlockBlob' } })).status,
    ).to.equal(403);

    // Once its 2 s have passed, the URL reads nothing.
    const expired = await eventually(
      async () => (await download(url)).status,
      (status) => status === 403,
    );
    expect(expired).to.equal(403);
  });

  it('deletes the file and forgets the task after retention', async () => {
    const done = await service.run({ format: 'ndjson' });
    // The blob's name is the project's folder and the file's name: the URL's last two parts.
    const fileName = new URL(done.download_url as string).pathname.split('/').slice(-2).join('/');
    expect(await service.blobs().list(fileName)).to.deep.equal([fileName]);
    const gone = await eventually(
      async () => (await service.status(done.id as string)).statusCode,
      (code) => code === 404,
    );
    expect(gone).to.equal(404);
    const files = await eventually(
      () => service.blobs().list(fileName),
      (names) => names.length === 0,
    );
    expect(files).to.deep.equal([]);
    // The sweep deletes the files of a round's tasks first, then their rows.
    const rows = await eventually(
      async () =>
        (await service.db().query('SELECT count(*)::int AS n FROM tasks WHERE id = $1', [done.id])).rows,
      (found) => found[0]?.n === 0,
    );
    expect(rows).to.deep.equal([{ n: 0 }]);
  });
});
