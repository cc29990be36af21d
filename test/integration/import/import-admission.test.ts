import { expect } from 'chai';
import { adminToken } from '../../support/admin-api.js';
import { HTTPS, useImportService } from '../../support/imports.js';

const records = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ email: `${tag}-${i}@admission.test` }));

describe('import admission: back-pressure and idempotency keys', () => {
  // No workers: what is accepted stays pending.
  const service = useImportService('postgres', {}, { import_pending_records_limit: 5 }, { workers: false });
  const post = async (body: unknown, headers: Record<string, string> = {}) =>
    service.client().request({
      method: 'POST',
      url: '/_api/admin/users/import',
      token: await adminToken(service.keys()),
      headers: { ...HTTPS, ...headers },
      body,
    });

  it('answers 429 with Retry-After once the pending records pass the limit, and accepts again as they drain', async () => {
    expect((await post({ identifier: 'email', records: records(3, 'a') })).statusCode).to.equal(200);
    expect((await post({ identifier: 'email', records: records(3, 'b') })).statusCode).to.equal(200);
    const refused = await post({ identifier: 'email', records: records(1, 'c') });
    expect(refused.statusCode).to.equal(429);
    expect(refused.headers['retry-after']).to.equal('5');
    expect(JSON.parse(refused.body)).to.deep.equal({
      error: {
        name: 'TooManyRequest',
        reason: 'ImportBacklogFull',
        message: 'too many import records are waiting; send again later',
        code: 429,
        info: { pending_records: 6, limit: 5 },
      },
    });
    // The backlog drains (the workers applied some records): imports are accepted again.
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
    expect((await post({ identifier: 'email', records: records(1, 'd') })).statusCode).to.equal(200);
  });

  it('admits requests sent at once one after the other: never two past the limit together', async () => {
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, n) => post({ identifier: 'email', records: records(5, `at-once-${n}`) })),
    );
    // The first one admitted fills the backlog (5 of 5): every other one sees it, and is refused.
    expect(answers.map((a) => a.statusCode).sort()).to.deep.equal([200, 429, 429, 429, 429, 429]);
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
  });

  it('answers a request sent again with the same Idempotency-Key with the first task, creating no other', async () => {
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
    const body = { identifier: 'email', records: records(1, 'e') };
    const first = await post(body, { 'idempotency-key': 'run-1-chunk-0' });
    const again = await post(body, { 'idempotency-key': 'run-1-chunk-0' });
    const other = await post(body, { 'idempotency-key': 'run-1-chunk-1' });
    expect(first.statusCode).to.equal(200);
    expect(JSON.parse(again.body)).to.deep.equal(JSON.parse(first.body));
    expect(JSON.parse(other.body).id).not.to.equal(JSON.parse(first.body).id);
    const { rows } = await service
      .db()
      .query(`SELECT count(*)::int AS n FROM tasks WHERE idempotency_key LIKE 'run-1-%'`);
    expect(rows).to.deep.equal([{ n: 2 }]);
    // Sent again while the backlog is full, it still gets its task rather than a 429.
    await service.db().query(`UPDATE tasks SET progress_processed = 0 WHERE kind = 'import'`);
    const whileFull = await post(body, { 'idempotency-key': 'run-1-chunk-0' });
    expect(whileFull.statusCode, whileFull.body).to.equal(200);
    expect(JSON.parse(whileFull.body)).to.deep.equal(JSON.parse(first.body));
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);

    const reused = await post({ ...body, upsert: true }, { 'idempotency-key': 'run-1-chunk-0' });
    expect(reused.statusCode).to.equal(422);
    expect(JSON.parse(reused.body)).to.deep.equal({
      error: {
        name: 'UnprocessableEntity',
        reason: 'IdempotencyKeyReused',
        message: 'this Idempotency-Key was sent with another request body',
        code: 422,
      },
    });
    const bad = await post(body, { 'idempotency-key': 'with space' });
    expect(bad.statusCode).to.equal(400);
    expect(JSON.parse(bad.body)).to.deep.equal({
      error: 'Idempotency-Key must be 1 to 200 visible ASCII characters',
    });
  });

  it('answers two requests sent at once with the same Idempotency-Key with one task, never a 500', async () => {
    await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
    const body = { identifier: 'email', records: records(1, 'race') };
    for (let pair = 0; pair < 20; pair++) {
      await service.db().query(`UPDATE tasks SET progress_processed = progress_total WHERE kind = 'import'`);
      const key = `race-${pair}`;
      const answers = await Promise.all([
        post(body, { 'idempotency-key': key }),
        post(body, { 'idempotency-key': key }),
      ]);
      expect(
        answers.map((a) => a.statusCode),
        answers.map((a) => a.body).join(),
      ).to.deep.equal([200, 200]);
      expect(JSON.parse(answers[1]?.body ?? '').id).to.equal(JSON.parse(answers[0]?.body ?? '').id);
    }
    const { rows } = await service
      .db()
      .query(`SELECT count(*)::int AS n FROM tasks WHERE idempotency_key LIKE 'race-%'`);
    expect(rows).to.deep.equal([{ n: 20 }]);
  });
});

describe("import admission: a project's own limit over the deployment's", () => {
  // The deployment's limit is its default (500,000 records); the project's file sets 2.
  const service = useImportService(
    'postgres',
    { limits: { import_pending_records: 2 } },
    {},
    { workers: false },
  );

  it("answers 429 naming the project's limit once its pending records pass it", async () => {
    const post = async (body: unknown) =>
      service.client().request({
        method: 'POST',
        url: '/_api/admin/users/import',
        token: await adminToken(service.keys()),
        headers: HTTPS,
        body,
      });
    expect((await post({ identifier: 'email', records: records(3, 'own') })).statusCode).to.equal(200);
    const refused = await post({ identifier: 'email', records: records(1, 'own-next') });
    expect(refused.statusCode).to.equal(429);
    expect(JSON.parse(refused.body).error.info).to.deep.equal({ pending_records: 3, limit: 2 });
  });
});
