import { expect } from 'chai';
import { DEFAULT_DETAILS_LIMIT } from '../../../api/routes/import.js';
import { MAX_RECORD_CAUSES } from '../../../pipeline/import/validate-record.js';
import { adminToken } from '../../support/admin-api.js';
import { HTTPS, useImportService } from '../../support/imports.js';

/**
 * A request of 500 KB can hold about 166,000 empty records, and one record an array of 150,000
 * items: the status read answers a page of details with the path of the next, and a failed
 * record lists a bounded number of causes with a count of the rest.
 */
describe('import status answers are bounded', function () {
  this.timeout(180_000);
  const service = useImportService('postgres');

  const read = async (path: string) => {
    const res = await service.client().request({
      method: 'GET',
      url: path,
      token: await adminToken(service.keys()),
      headers: HTTPS,
    });
    expect(res.statusCode, res.body).to.equal(200);
    return { bytes: res.body.length, body: JSON.parse(res.body) as Record<string, unknown> };
  };

  it('pages the details of a request of 166k empty records, the next page named by details_next', async () => {
    const records = Array.from({ length: 166_000 }, () => ({}));
    const status = await service.run({ identifier: 'email', records });
    expect(status.summary).to.deep.include({ total: records.length, failed: records.length });

    const first = await read(`/_api/admin/users/import/${status.id}`);
    const details = first.body.details as { index: number }[];
    expect(details).to.have.length(DEFAULT_DETAILS_LIMIT);
    expect(first.bytes, 'one page, not 166k details').to.be.below(1_000_000);
    expect(first.body.details_next).to.equal(
      `/_api/admin/users/import/${status.id}?offset=${DEFAULT_DETAILS_LIMIT}&limit=${DEFAULT_DETAILS_LIMIT}`,
    );
    const second = await read(first.body.details_next as string);
    expect((second.body.details as { index: number }[])[0]?.index).to.equal(DEFAULT_DETAILS_LIMIT);

    const last = await read(`/_api/admin/users/import/${status.id}?offset=165990&limit=100`);
    expect((last.body.details as unknown[]).length).to.equal(10);
    expect(last.body).not.to.have.property('details_next');
  });

  it('fails a record of 150k roles alone, listing some causes and counting the rest', async () => {
    const roles = Array.from({ length: 150_000 }, () => '');
    const status = await service.run({
      identifier: 'email',
      records: [{ email: 'many@example.com', roles }, { email: 'fine@example.com' }],
    });
    expect(status.summary).to.deep.include({ inserted: 1, failed: 1 });
    const [failed] = status.details as {
      errors: { info: { causes: unknown[]; causes_omitted: number } }[];
    }[];
    const info = failed?.errors[0]?.info;
    expect(info?.causes).to.have.length(MAX_RECORD_CAUSES);
    expect(info?.causes).to.deep.include({
      location: '/roles',
      kind: 'maxItems',
      details: { limit: 1000, message: 'must NOT have more than 1000 items' },
    });
    expect(info?.causes_omitted).to.be.above(100_000);
  });
});
