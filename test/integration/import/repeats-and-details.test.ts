import { expect } from 'chai';
import { adminToken } from '../../support/admin-api.js';
import { useImportService } from '../../support/imports.js';

// A request's repeated identifiers are warned about, summary.warnings counts warnings, and the
// status read can filter and page its details or leave them out.
describe('import: repeated identifiers, warnings count and details pages', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {}, { import_batch_size: 2 });
  let id: string;
  let status: Record<string, unknown>;

  before(async () => {
    const res = await service.post({
      identifier: 'email',
      records: [
        { email: 'rep@example.com', name: 'First' },
        { email: 'other@example.com' },
        { email: 'not-an-email' },
        { email: 'REP@example.com', name: 'Second' }, // the same email, in the next batch
        { email: 'rep@example.com', name: 'Third' },
      ],
    });
    expect(res.statusCode, res.body).to.equal(200);
    id = JSON.parse(res.body).id;
    status = await service.waitForCompletion(id);
  });

  it('warns on each record whose identifier an earlier one of the request has, naming the nearest', async () => {
    const details = status.details as { index: number; outcome: string; warnings?: { message: string }[] }[];
    expect(details.map((d) => d.outcome)).to.deep.equal([
      'inserted',
      'inserted',
      'failed',
      'skipped',
      'skipped',
    ]);
    expect(details[0]?.warnings).to.equal(undefined);
    expect(details[3]?.warnings).to.deep.equal([
      { message: 'email repeats record 0; the records apply in request order.' },
      { message: 'skipping because upsert = false and user exists' },
    ]);
    expect(details[4]?.warnings?.[0]).to.deep.equal({
      message: 'email repeats record 3; the records apply in request order.',
    });
    expect(status.summary).to.deep.equal({
      total: 5,
      inserted: 2,
      updated: 0,
      skipped: 2,
      failed: 1,
      warnings: 4,
    });
  });

  it('shows each record as submitted, its members in the order given', () => {
    const details = status.details as { record: Record<string, unknown> }[];
    // jsonb would have reordered them (shorter names first): name, email.
    expect(details.map((d) => Object.keys(d.record))).to.deep.equal([
      ['email', 'name'],
      ['email'],
      ['email'],
      ['email', 'name'],
      ['email', 'name'],
    ]);
    expect(details[3]?.record).to.deep.equal({ email: 'REP@example.com', name: 'Second' });
  });

  it('pages the details by outcome, offset and limit, and leaves them out with details=false', async () => {
    const read = async (query: string) => {
      const res = await service.client().request({
        method: 'GET',
        url: `/_api/admin/users/import/${id}?${query}`,
        token: await adminToken(service.keys()),
        headers: { 'x-forwarded-proto': 'https' },
      });
      return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
    };
    const indexes = async (query: string) =>
      ((await read(query)).body.details as { index: number }[]).map((d) => d.index);
    expect(await indexes('outcome=skipped')).to.deep.equal([3, 4]);
    expect(await indexes('outcome=failed')).to.deep.equal([2]);
    expect(await indexes('offset=1&limit=2')).to.deep.equal([1, 2]);
    expect(await indexes('outcome=inserted&offset=1')).to.deep.equal([1]);
    const bare = await read('details=false');
    expect(bare.body).to.not.have.property('details');
    expect(bare.body.summary).to.deep.include({ total: 5 });
    for (const bad of [
      'outcome=lost',
      'limit=0',
      'limit=10001',
      'offset=-1',
      'offset=x',
      'details=no',
      'limit=1&limit=2',
    ]) {
      const res = await read(bad);
      expect(res.statusCode, bad).to.equal(400);
      expect(res.body.error, bad).to.be.a('string');
    }
  });
});
