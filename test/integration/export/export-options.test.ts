import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { useExportService } from '../../support/exports.js';
import { createUser } from '../../support/users.js';

// Export options (issue: lossless migrations, F): escaped formulas, gzip, and the user filters.
describe('export options: csv.escape_formulas, compression and filters', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { settings: { export_rate_limit: 100 } });
  const formulas = ["=cmd|' /C calc'!A0", '+1 555', '-2+3', '@SUM(A1:A2)', '\tindented', 'plain =not'];

  before(async () => {
    const db = service.db();
    const project = service.config().project;
    for (const [i, name] of formulas.entries()) {
      await createUser(db, project, {
        email: `f${i}@example.com`,
        standard: { name },
        createdAt: `2026-01-0${i + 1}T00:00:00Z`,
        disabled: i === 0,
      });
    }
    // Updated later than created: the updated_since filter sees it.
    await db.query(
      `UPDATE users SET updated_at = '2026-06-01T00:00:00Z' WHERE standard_attributes->>'email' = 'f5@example.com'`,
    );
  });

  /** Runs an export and downloads its file (raw bytes), with the response's headers. */
  const exportFile = async (request: Record<string, unknown>) => {
    const status = await service.run(request);
    expect(status.error, JSON.stringify(status)).to.equal(undefined);
    const res = await fetch(status.download_url as string);
    return { headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const csvNames = (text: string) =>
    text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.slice(line.indexOf(',') + 1));

  it('leaves cells as they are by default, and with escape_formulas prefixes a quote to what a spreadsheet would run', async () => {
    const fields = [{ pointer: '/email' }, { pointer: '/name' }];
    const plain = (await exportFile({ format: 'csv', csv: { fields } })).bytes.toString();
    expect(csvNames(plain)).to.deep.equal(formulas);
    const escaped = (
      await exportFile({ format: 'csv', csv: { fields, escape_formulas: true } })
    ).bytes.toString();
    expect(csvNames(escaped)).to.deep.equal([
      "'=cmd|' /C calc'!A0",
      "'+1 555",
      "'-2+3",
      "'@SUM(A1:A2)",
      "'\tindented",
      'plain =not',
    ]);
  });

  it('gzip-compresses the file, named .gz, whose content is the uncompressed export', async () => {
    const plain = await exportFile({ format: 'ndjson' });
    const gz = await exportFile({ format: 'ndjson', compression: 'gzip' });
    expect(gz.headers.get('content-type')).to.equal('application/gzip');
    expect(gz.headers.get('content-disposition')).to.match(
      /filename="default-userexport_[^"]+Z\.ndjson\.gz"$/,
    );
    expect(gz.bytes.subarray(0, 2)).to.deep.equal(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(gz.bytes).toString()).to.equal(plain.bytes.toString());
  });

  it('keeps only the users the filters name', async () => {
    const emails = async (filters: Record<string, unknown>) => {
      const { bytes } = await exportFile({
        format: 'csv',
        csv: { fields: [{ pointer: '/email' }] },
        ...filters,
      });
      return bytes.toString().trimEnd().split('\n').slice(1);
    };
    expect(await emails({ created_after: '2026-01-04T00:00:00Z' })).to.deep.equal([
      'f4@example.com',
      'f5@example.com',
    ]);
    expect(await emails({ updated_since: '2026-05-01T00:00:00+02:00' })).to.deep.equal(['f5@example.com']);
    expect(await emails({ disabled: true })).to.deep.equal(['f0@example.com']);
    expect(await emails({ disabled: false, created_after: '2026-01-05T00:00:00Z' })).to.deep.equal([
      'f5@example.com',
    ]);
    const status = await service.run({ format: 'ndjson', disabled: true });
    expect(status.error).to.equal(undefined);
  });

  it('writes /family_name, /address/formatted, /created_at and /updated_at on request, and no times in ndjson', async () => {
    await service.db().query(
      `UPDATE users SET standard_attributes = standard_attributes
              || '{"family_name": "Lee", "address": {"formatted": "1 Main St, Springfield"}}'
        WHERE standard_attributes->>'email' = 'f5@example.com'`,
    );
    await service
      .db()
      .query(
        `UPDATE users SET updated_at = '2026-06-01T12:30:00.123456Z' WHERE standard_attributes->>'email' = 'f5@example.com'`,
      );
    const fields = ['/email', '/family_name', '/address/formatted', '/created_at', '/updated_at'].map(
      (pointer) => ({ pointer }),
    );
    const csv = (
      await exportFile({ format: 'csv', csv: { fields }, created_after: '2026-01-05T00:00:00Z' })
    ).bytes
      .toString()
      .trimEnd()
      .split('\n');
    expect(csv).to.deep.equal([
      'email,family_name,address.formatted,created_at,updated_at',
      'f5@example.com,Lee,"1 Main St, Springfield",2026-01-06T00:00:00.000000Z,2026-06-01T12:30:00.123456Z',
    ]);
    const ndjson = (
      await exportFile({ format: 'ndjson', created_after: '2026-01-05T00:00:00Z' })
    ).bytes.toString();
    const record = JSON.parse(ndjson);
    expect(record).to.deep.include({ email: 'f5@example.com', family_name: 'Lee' });
    expect(record).not.to.have.any.keys('created_at', 'updated_at');
  });

  it('refuses a filter time that is not RFC 3339 and an unknown compression', async () => {
    for (const body of [
      { format: 'csv', created_after: 'yesterday' },
      { format: 'csv', updated_since: '2026-01-01' },
      { format: 'csv', compression: 'zip' },
    ]) {
      const res = await service.post(body);
      expect(res.statusCode, JSON.stringify(body)).to.equal(400);
      expect(JSON.parse(res.body).error.reason).to.equal('ValidationFailed');
    }
  });
});
