import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { useImportService } from '../../support/imports.js';

type Detail = { index: number; outcome: string; user_id?: string; errors?: Record<string, unknown>[] };

/**
 * Bad data fails its record, never the task: values Postgres cannot store are refused by
 * validation, and whatever the database itself refuses inside a batch (a constraint, a value too
 * large for its index) fails that record alone while the rest of the batch applies.
 */
describe('import of bad data: each bad record fails alone', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {}, { import_batch_size: 50 });

  before(async () => {
    // Constraints the planner knows nothing of, as a DBA might add them: the database is the judge.
    await service
      .db()
      .query(`CREATE UNIQUE INDEX users_nickname ON users ((standard_attributes->>'nickname'))`);
    await service
      .db()
      .query(
        `ALTER TABLE users ADD CONSTRAINT no_banned_name CHECK (standard_attributes->>'name' <> 'Banned')`,
      );
  });

  it('fails NUL, a lone surrogate, a value too large, a unique clash and a check violation alone', async () => {
    const records = [
      { email: 'first.x@rel.test' },
      { email: 'nul.x@rel.test', name: 'a\u0000b' },
      { email: 'surrogate.x@rel.test', given_name: 'x\ud800y' },
      { email: 'phone.x@rel.test', phone_number: '+14155552671\u0000' },
      { email: 'key.x@rel.test', custom_attributes: { 'bad\u0000key': 1 } },
      // Too large for the login id index, even compressed (random text does not compress).
      { email: 'long.x@rel.test', preferred_username: randomBytes(6000).toString('base64') },
      { email: 'nick1.x@rel.test', nickname: 'same' },
      { email: 'nick2.x@rel.test', nickname: 'same' },
      { email: 'banned.x@rel.test', name: 'Banned' },
      { email: 'last.x@rel.test' },
    ];
    const status = await service.run({ identifier: 'email', records });
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    expect(status.summary).to.deep.equal({
      total: 10,
      inserted: 3,
      updated: 0,
      skipped: 0,
      failed: 7,
      warnings: 0,
    });
    const details = status.details as Detail[];
    expect(details.map((d) => d.outcome)).to.deep.equal(
      [
        'inserted',
        'failed',
        'failed',
        'failed',
        'failed',
        'failed',
        'inserted',
        'failed',
        'failed',
        'inserted',
      ],
      JSON.stringify(details),
    );
    const errorOf = (i: number) =>
      details[i]?.errors?.[0] as { reason: string; info: Record<string, unknown> };
    const locations = (i: number) =>
      (errorOf(i).info.causes as { location: string }[]).map((c) => c.location);
    expect(errorOf(1).reason).to.equal('ValidationFailed');
    expect(locations(1)).to.deep.equal(['/name']);
    expect(locations(2)).to.deep.equal(['/given_name']);
    expect(locations(3)).to.include('/phone_number');
    expect(locations(4)).to.deep.equal(['/custom_attributes/bad\u0000key'.replace('\u0000', '\ufffd')]);
    expect(errorOf(5)).to.deep.include({ reason: 'RecordRefused', info: { sqlstate: '54000' } });
    expect(errorOf(7)).to.deep.include({ reason: 'RecordRefused', info: { sqlstate: '23505' } });
    expect(errorOf(8)).to.deep.include({ reason: 'RecordRefused', info: { sqlstate: '23514' } });
    // The details show the record as submitted, with what cannot be stored shown as U+FFFD.
    expect((status.details as { record: { name?: string } }[])[1]?.record.name).to.equal('a\ufffdb');

    const { rows } = await service
      .db()
      .query<{ email: string }>(
        `SELECT standard_attributes->>'email' AS email FROM users ORDER BY created_at`,
      );
    expect(rows.map((r) => r.email)).to.deep.equal([
      'first.x@rel.test',
      'nick1.x@rel.test',
      'last.x@rel.test',
    ]);
  });

  it('fails a password hash whose cost passes a bound alone, naming the bound', async () => {
    const B64 = 'c29tZXNhbHRzb21lc2FsdA';
    const records = [
      {
        email: 'bcrypt31.x@rel.test',
        password: {
          type: 'bcrypt',
          password_hash: '$2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW',
        },
      },
      {
        email: 'scrypt.x@rel.test',
        password: { type: 'scrypt', password_hash: `$scrypt$ln=24,r=64,p=64$${B64}$${B64}` },
      },
      {
        email: 'argon2.x@rel.test',
        mfa: {
          password: { type: 'argon2id', password_hash: `$argon2id$v=19$m=4194304,t=64,p=1$${B64}$${B64}` },
        },
      },
      { email: 'fine.x@rel.test' },
    ];
    const status = await service.run({ identifier: 'email', records });
    expect(status.summary).to.deep.include({ inserted: 1, failed: 3 });
    const causes = (status.details as Detail[]).slice(0, 3).map((d) => {
      const info = d.errors?.[0]?.info as { causes: { location: string; kind: string }[] } | undefined;
      const [cause] = info?.causes ?? [];
      return [cause?.location, cause?.kind];
    });
    expect(causes).to.deep.equal([
      ['/password/password_hash', 'maximum'],
      ['/password/password_hash', 'maximum'],
      ['/mfa/password/password_hash', 'maximum'],
    ]);
  });

  it('answers lookups with NUL or a lone surrogate GetUsersInvalidArgument', async () => {
    for (const [query, variables] of [
      [
        'query($v: String!) { getUserByLoginID(loginIDKey: "email", loginIDValue: $v) { id } }',
        { v: 'a\u0000@x.test' },
      ],
      [
        'query($v: String!) { getUserByLoginID(loginIDKey: "phone", loginIDValue: $v) { id } }',
        { v: '+14155552671\u0000' },
      ],
      [
        'query($v: String!) { getUsersByStandardAttribute(attributeName: "email", attributeValue: $v) { id } }',
        { v: '\ud800@x.test' },
      ],
      [
        'query($v: String!) { getUserByOAuth(oauthProviderAlias: "google", oauthProviderUserID: $v) { id } }',
        { v: '1\u0000' },
      ],
    ] as const) {
      const res = await service.client().graphql(query, variables);
      expect(res.errors?.[0]?.extensions, JSON.stringify(variables)).to.deep.include({
        errorName: 'Invalid',
        reason: 'GetUsersInvalidArgument',
      });
    }
  });
});
