import { expect } from 'chai';
import { useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { taskEndpoints } from '../../support/task-endpoints.js';

/**
 * The account fields Authgear's import has gained: account_valid_from and account_valid_until
 * (present: set, read as UTC; null: removed; absent: unchanged; a period that ends before it
 * begins fails the record), answered by the GraphQL User and written by exports.
 */
describe('account validity through import, lookups and export', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { settings: { trust_proxy: true, export_rate_limit: 100 } });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);

  const validity = async (email: string) => {
    const res = await service
      .client()
      .graphql(
        `query ($v: String!) { getUserByLoginID(loginIDKey: "email", loginIDValue: $v) { accountValidFrom accountValidUntil } }`,
        { v: email },
      );
    const user = res.data?.getUserByLoginID as {
      accountValidFrom: string | null;
      accountValidUntil: string | null;
    };
    const utc = (t: string | null) => (t === null ? null : new Date(t).toISOString());
    return { from: utc(user.accountValidFrom), until: utc(user.accountValidUntil) };
  };

  it('stores the period on insert, in UTC, and updates it as the record says', async () => {
    const inserted = await imports.run({
      identifier: 'email',
      records: [
        {
          email: 'val@example.com',
          account_valid_from: '2026-03-01T09:30:00+09:00',
          account_valid_until: '2027-03-01T00:00:00Z',
        },
        { email: 'open@example.com' },
      ],
    });
    expect(inserted.summary).to.deep.include({ inserted: 2, failed: 0 });
    expect(await validity('val@example.com')).to.deep.equal({
      from: '2026-03-01T00:30:00.000Z',
      until: '2027-03-01T00:00:00.000Z',
    });
    expect(await validity('open@example.com')).to.deep.equal({ from: null, until: null });

    // Absent: unchanged; null: removed; present: set.
    const updated = await imports.run({
      identifier: 'email',
      upsert: true,
      records: [{ email: 'val@example.com', name: 'Val', account_valid_until: null }],
    });
    expect(updated.summary).to.deep.include({ updated: 1 });
    expect(await validity('val@example.com')).to.deep.equal({
      from: '2026-03-01T00:30:00.000Z',
      until: null,
    });

    // A period that would end before it begins fails the record alone: the record's own, or the
    // one it leaves with the bound the user kept.
    const refused = await imports.run({
      identifier: 'email',
      upsert: true,
      records: [
        { email: 'val@example.com', account_valid_until: '2026-01-01T00:00:00Z' },
        {
          email: 'new@example.com',
          account_valid_from: '2026-02-01T00:00:00Z',
          account_valid_until: '2026-01-01T00:00:00Z',
        },
        { email: 'open@example.com', account_valid_until: '2030-01-01T00:00:00Z' },
      ],
    });
    expect(refused.summary).to.deep.include({ failed: 2, updated: 1 });
    const details = refused.details as { outcome: string; errors?: { reason: string; info?: unknown }[] }[];
    for (const failed of details.slice(0, 2)) {
      expect(failed.outcome).to.equal('failed');
      expect(failed.errors?.[0]?.reason).to.equal('ValidationFailed');
      expect(JSON.stringify(failed.errors?.[0]?.info)).to.include('/account_valid_until');
    }
    expect(await validity('val@example.com')).to.deep.equal({
      from: '2026-03-01T00:30:00.000Z',
      until: null,
    });
    expect(await validity('open@example.com')).to.deep.equal({
      from: null,
      until: '2030-01-01T00:00:00.000Z',
    });
    const times = await imports.run({
      identifier: 'email',
      records: [{ email: 'bad@example.com', account_valid_from: '1 May' }],
    });
    expect(times.summary).to.deep.include({ failed: 1 });
  });

  it('exports the period and the last login as CSV columns, and the period in ndjson records', async () => {
    await service
      .db()
      .query(
        `UPDATE users SET last_login_at = '2026-05-05T05:05:05Z' WHERE standard_attributes->>'email' = 'open@example.com'`,
      );
    const csv = await service.run({
      format: 'csv',
      csv: {
        fields: [
          { pointer: '/email' },
          { pointer: '/account_valid_from' },
          { pointer: '/account_valid_until' },
          { pointer: '/last_login_at' },
        ],
      },
    });
    const lines = (await (await fetch(csv.download_url as string)).text()).trim().split('\n');
    expect(lines[0]).to.equal('email,account_valid_from,account_valid_until,last_login_at');
    expect(lines).to.include('val@example.com,2026-03-01T00:30:00.000000Z,,');
    expect(lines).to.include('open@example.com,,2030-01-01T00:00:00.000000Z,2026-05-05T05:05:05.000000Z');
    const ndjson = await service.run({ format: 'ndjson' });
    const records = (await (await fetch(ndjson.download_url as string)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const val = records.find((r) => r.email === 'val@example.com');
    expect(val).to.deep.include({ account_valid_from: '2026-03-01T00:30:00.000000Z' });
    expect(val).not.to.have.property('account_valid_until');
    expect(val).not.to.have.property('last_login_at');
  });
});
