import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '../../../pipeline/log.js';
import { sweepExpiredTasks } from '../../../pipeline/tasks/retention.js';
import { adminToken } from '../../support/admin-api.js';
import { download, useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { taskEndpoints } from '../../support/task-endpoints.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const TOTP = 'JBSWY3DPEHPK3PXPSECRETTOTP';

/** The lines of a results file, parsed. */
const lines = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

/**
 * Each completed import writes its details to a results file beside the exports: one JSON line per
 * record in request order, secrets redacted, read through a fresh signed `results_url`, and
 * deleted with its task.
 */
describe('import results file', function () {
  this.timeout(90_000);
  const service = useExportService('postgres', { settings: { trust_proxy: true } });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);

  /** Every detail of a task, read page by page through its status. */
  const pagedDetails = async (id: string): Promise<unknown[]> => {
    const all: unknown[] = [];
    for (let offset = 0; ; offset += 2) {
      const res = await service.client().request({
        method: 'GET',
        url: `/_api/admin/users/import/${id}?offset=${offset}&limit=2`,
        token: await adminToken(service.keys()),
        headers: HTTPS,
      });
      const page = JSON.parse(res.body) as { details: unknown[]; details_next?: string };
      all.push(...page.details);
      if (!page.details_next) return all;
    }
  };

  const throughApi = async (id: string) =>
    service.client().request({
      method: 'GET',
      url: `/_api/admin/users/import/${id}/results`,
      token: await adminToken(service.keys()),
      headers: HTTPS,
    });

  it('holds one line per record, equal to the details, with no secret in it', async () => {
    const done = await imports.run({
      identifier: 'email',
      records: [
        { email: 'first@example.com', password: { type: 'bcrypt', password_hash: HASH } },
        { email: 'second@example.com', mfa: { totp: { secret: TOTP } } },
        { email: 'not-an-email', password: { type: 'bcrypt', password_hash: HASH } },
        { email: 'first@example.com', name: 'Again' },
        { email: 'fifth@example.com' },
      ],
    });
    expect(done.summary).to.deep.include({ total: 5, inserted: 3 });
    expect(done.results_url).to.be.a('string');

    const file = await download(done.results_url as string);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('application/x-ndjson');
    expect(file.text).to.not.include(HASH).and.to.not.include(TOTP);
    const results = lines(file.text);
    expect(results).to.have.length(5);
    expect(results).to.deep.equal(await pagedDetails(done.id as string));
    expect(results.map((r) => (r as { index: number }).index)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(done.results_bytes).to.equal(Buffer.byteLength(file.text));
    expect(done.results_sha256).to.equal(createHash('sha256').update(file.text).digest('hex'));

    // The same file through the API's own origin (the console's way).
    const through = await throughApi(done.id as string);
    expect(through.statusCode).to.equal(200);
    expect(through.headers['content-type']).to.equal('application/x-ndjson');
    expect(through.body).to.equal(file.text);
    await service.db().query('UPDATE tasks SET file_name = NULL WHERE id = $1', [done.id]);
    const none = await throughApi(done.id as string);
    expect(none.statusCode).to.equal(404);
    expect(JSON.parse(none.body).error.reason).to.equal('ImportResultsUnavailable');
  });

  it('is signed afresh at each read, listed with its task, and written for a dry run too', async () => {
    const dry = await imports.run({
      identifier: 'email',
      dry_run: true,
      records: [{ email: 'dry@example.com' }],
    });
    const first = dry.results_url as string;
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // a signature's expiry has a second's grain
    const again = (await imports.status(dry.id as string)).body;
    expect(again.results_url).to.be.a('string').and.not.equal(first);
    const [line, ...more] = lines((await download(again.results_url as string)).text);
    expect(more).to.deep.equal([]);
    expect(line).to.deep.include({ index: 0, record: { email: 'dry@example.com' }, outcome: 'would_insert' });
    const res = await service.client().request({
      method: 'GET',
      url: '/_api/admin/users/import?limit=1',
      token: await adminToken(service.keys()),
      headers: HTTPS,
    });
    const listed = (JSON.parse(res.body) as { tasks: Record<string, unknown>[] }).tasks[0];
    expect(listed?.id).to.equal(dry.id);
    expect(listed?.results_sha256).to.equal(dry.results_sha256);
    expect(listed?.results_url).to.be.a('string');
  });

  it('goes with its task after retention', async () => {
    const done = await imports.run({ identifier: 'email', records: [{ email: 'kept@example.com' }] });
    const { rows } = await service
      .db()
      .query<{ file_name: string }>('SELECT file_name FROM tasks WHERE id = $1', [done.id]);
    const name = rows[0]?.file_name as string;
    expect(await service.blobs().list(name)).to.deep.equal([name]);
    await service
      .db()
      .query(`UPDATE tasks SET completed_at = completed_at - interval '2 days' WHERE id = $1`, [done.id]);
    const deleted = await sweepExpiredTasks(service.db(), service.blobs(), 86_400, createLogger('silent'));
    expect(deleted).to.include(done.id);
    expect(await service.blobs().list(name)).to.deep.equal([]);
    expect((await imports.status(done.id as string)).statusCode).to.equal(404);
  });
});
