import { expect } from 'chai';
import { idOf } from '../../support/admin-api.js';
import { insertedSummary, useImportService } from '../../support/imports.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

describe('import outcomes (HTTP -> Kafka -> worker -> Postgres)', function () {
  this.timeout(60_000);
  const service = useImportService('kafka', { custom_attributes: [{ name: 'member_id', type: 'string' }] });

  before(async () => {
    for (const key of ['admin', 'staff']) {
      await service.client().graphql(`mutation { createRole(input: { key: "${key}" }) { role { id } } }`);
    }
    await service.client().graphql('mutation { createGroup(input: { key: "team_a" }) { group { id } } }');
  });

  it('answers the POST with a pending task', async () => {
    const res = await service.post({ identifier: 'email', records: [{ email: 'pending@example.com' }] });
    expect(res.statusCode).to.equal(200);
    const body = JSON.parse(res.body);
    expect(Object.keys(body).sort()).to.deep.equal(['created_at', 'id', 'status']);
    expect(body.id).to.match(/^userimport_[A-Z2-7]{32}$/);
    expect(body.status).to.equal('pending');
    expect(body.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
  });

  it('inserts a new user with every member, redacts secrets in the details, and lookups see it', async () => {
    const record = {
      email: 'Ann@Example.com',
      preferred_username: 'AnnL',
      phone_number: '+14155552671',
      email_verified: true,
      name: 'Ann Lee',
      given_name: 'Ann',
      address: { country: 'US', locality: 'SF' },
      custom_attributes: { member_id: 'M-7' },
      roles: ['admin'],
      groups: ['team_a'],
      password: { type: 'bcrypt', password_hash: HASH },
      mfa: {
        email: 'ann.mfa@example.com',
        password: { type: 'bcrypt', password_hash: HASH },
        totp: { secret: 'JBSWY3DPEHPK3PXP' },
      },
    };
    const status = await service.run({ identifier: 'email', records: [record] });
    expect(status.summary).to.deep.equal(insertedSummary(1));
    const [detail] = status.details as Record<string, unknown>[];
    expect(detail?.outcome).to.equal('inserted');
    expect(detail?.index).to.equal(0);
    expect(detail?.record).to.deep.equal({
      ...record,
      password: { type: 'bcrypt', password_hash: 'REDACTED' },
      mfa: {
        email: 'ann.mfa@example.com',
        password: { type: 'bcrypt', password_hash: 'REDACTED' },
        totp: { secret: 'REDACTED' },
      },
    });
    expect(JSON.stringify(status)).not.to.include(HASH).and.not.include('JBSWY3DPEHPK3PXP');

    const res = await service.client().graphql(
      `{ getUserByLoginID(loginIDKey: "email", loginIDValue: "ann@example.com") {
          id standardAttributes customAttributes roles { edges { node { key } } } groups { edges { node { key } } }
          authenticators { totalCount edges { node { kind type isDefault claims } } }
          primaryPassword { kind type } secondaryPassword { type } primaryOOBOTPEmailAuthenticator { type }
          secondaryOOBOTPEmailAuthenticators { type claims } secondaryTOTPAuthenticators { type claims } } }`,
    );
    expect(idOf(res, 'getUserByLoginID')).to.equal(detail?.user_id);
    const user = res.data?.getUserByLoginID as Record<string, unknown>;
    expect(user.standardAttributes).to.deep.include({
      email: 'ann@example.com',
      email_verified: true,
      preferred_username: 'annl',
      phone_number: '+14155552671',
      phone_number_verified: false,
      name: 'Ann Lee',
      given_name: 'Ann',
      address: { country: 'US', locality: 'SF' },
    });
    expect(user.customAttributes).to.deep.equal({ member_id: 'M-7' });
    expect(user.roles).to.deep.equal({ edges: [{ node: { key: 'admin' } }] });
    expect(user.groups).to.deep.equal({ edges: [{ node: { key: 'team_a' } }] });
    // Authgear's authenticator fields: kinds, types and OOB addresses; never a hash or a secret.
    expect(user.primaryPassword).to.deep.equal({ kind: 'PRIMARY', type: 'PASSWORD' });
    expect(user.secondaryPassword).to.deep.equal({ type: 'PASSWORD' });
    expect(user.primaryOOBOTPEmailAuthenticator).to.equal(null);
    expect(user.secondaryOOBOTPEmailAuthenticators).to.deep.equal([
      {
        type: 'OOB_OTP_EMAIL',
        claims: { 'https://authgear.com/claims/oob_otp/email': 'ann.mfa@example.com' },
      },
    ]);
    expect(user.secondaryTOTPAuthenticators).to.deep.equal([{ type: 'TOTP', claims: {} }]);
    const authenticators = user.authenticators as {
      totalCount: number;
      edges: { node: Record<string, unknown> }[];
    };
    expect(authenticators.totalCount).to.equal(4);
    expect(authenticators.edges.filter((e) => e.node.isDefault)).to.have.length(1);
    expect(JSON.stringify(res)).not.to.include(HASH).and.not.include('JBSWY3DPEHPK3PXP');
    const { rows } = await service
      .db()
      .query(
        'SELECT kind, type, password_hash, email, totp_secret FROM authenticators WHERE user_id = $1 ORDER BY kind, type',
        [detail?.user_id],
      );
    expect(rows).to.deep.equal([
      { kind: 'primary', type: 'password', password_hash: HASH, email: null, totp_secret: null },
      {
        kind: 'secondary',
        type: 'oob_otp_email',
        password_hash: null,
        email: 'ann.mfa@example.com',
        totp_secret: null,
      },
      { kind: 'secondary', type: 'password', password_hash: HASH, email: null, totp_secret: null },
      { kind: 'secondary', type: 'totp', password_hash: null, email: null, totp_secret: 'JBSWY3DPEHPK3PXP' },
    ]);
  });

  it('skips an existing user when upsert is false, updates it when true', async () => {
    const first = await service.run({
      identifier: 'email',
      records: [{ email: 'bo@example.com', name: 'Bo' }],
    });
    const userId = (first.details as { user_id: string }[])[0]?.user_id;
    const skipped = await service.run({
      identifier: 'email',
      records: [{ email: 'BO@example.com', name: 'Robert' }],
    });
    expect(skipped.summary).to.deep.equal({
      total: 1,
      inserted: 0,
      updated: 0,
      skipped: 1,
      failed: 0,
      warnings: 1,
    });
    expect(skipped.details).to.deep.equal([
      {
        index: 0,
        record: { email: 'BO@example.com', name: 'Robert' },
        outcome: 'skipped',
        user_id: userId,
        warnings: [{ message: 'skipping because upsert = false and user exists' }],
      },
    ]);
    const updated = await service.run({
      upsert: true,
      identifier: 'email',
      records: [{ email: 'bo@example.com', name: 'Robert' }],
    });
    expect(updated.summary).to.deep.equal({
      total: 1,
      inserted: 0,
      updated: 1,
      skipped: 0,
      failed: 0,
      warnings: 0,
    });
    expect((updated.details as { user_id: string; outcome: string }[])[0]).to.deep.include({
      outcome: 'updated',
      user_id: userId,
    });
    const { rows } = await service
      .db()
      .query(`SELECT standard_attributes->>'name' AS name FROM users WHERE id = $1`, [userId]);
    expect(rows).to.deep.equal([{ name: 'Robert' }]);
  });

  it('fails a bad record alone, with the reason, and applies the others', async () => {
    const status = await service.run({
      identifier: 'email',
      records: [
        { email: 'ok1@example.com' },
        { email: 'not-an-email' },
        { email: 'ok2@example.com', phone_number: '0415 555 2671' },
        { email: 'ok3@example.com', password: { type: 'bcrypt', password_hash: 'plaintext' } },
        { email: 'ok4@example.com', nickname_typo: 'x' },
        { email: 'ok5@example.com', roles: ['admin', 'nope'] },
        { email: 'ok6@example.com', groups: ['ghosts'] },
        { email: 'ok7@example.com' },
      ],
    });
    expect(status.summary).to.deep.equal({
      total: 8,
      inserted: 2,
      updated: 0,
      skipped: 0,
      failed: 6,
      warnings: 0,
    });
    const details = status.details as {
      outcome: string;
      errors?: Record<string, unknown>[];
      user_id?: string;
    }[];
    expect(details.map((d) => d.outcome)).to.deep.equal([
      'inserted',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'inserted',
    ]);
    const error = (i: number) => details[i]?.errors?.[0] as Record<string, unknown>;
    expect(error(1)).to.deep.include({ name: 'Invalid', reason: 'ValidationFailed', code: 400 });
    expect((error(1).info as { causes: unknown[] }).causes).to.deep.equal([
      { location: '/email', kind: 'format', details: { message: 'invalid email address' } },
    ]);
    expect((error(2).info as { causes: { location: string }[] }).causes[0]?.location).to.equal(
      '/phone_number',
    );
    expect((error(3).info as { causes: { location: string }[] }).causes[0]?.location).to.equal(
      '/password/password_hash',
    );
    expect((error(4).info as { causes: { kind: string }[] }).causes[0]?.kind).to.equal(
      'additionalProperties',
    );
    expect(error(5)).to.deep.equal({
      name: 'NotFound',
      reason: 'RoleUnknownKeys',
      message: 'unknown role keys',
      code: 404,
      info: { keys: ['nope'] },
    });
    expect(error(6)).to.deep.include({
      name: 'NotFound',
      reason: 'GroupUnknownKeys',
      info: { keys: ['ghosts'] },
    });
    for (const i of [1, 2, 3, 4, 5, 6]) expect(details[i]).not.to.have.property('user_id');
    const { rows } = await service
      .db()
      .query(
        `SELECT count(*)::int AS n FROM identities WHERE login_id IN ('ok2@example.com', 'ok5@example.com', 'ok6@example.com')`,
      );
    expect(rows).to.deep.equal([{ n: 0 }]);
  });

  it('refuses an identity that another user holds (DuplicatedIdentity)', async () => {
    await service.run({
      identifier: 'email',
      records: [{ email: 'carl@example.com', preferred_username: 'carl' }],
    });
    const status = await service.run({
      identifier: 'email',
      records: [{ email: 'other@example.com', preferred_username: 'CARL' }],
    });
    const detail = (status.details as { outcome: string; errors: Record<string, unknown>[] }[])[0];
    expect(detail?.outcome).to.equal('failed');
    expect(detail?.errors[0]).to.deep.include({ name: 'Invalid', reason: 'DuplicatedIdentity', code: 400 });
    const { rows } = await service
      .db()
      .query(`SELECT 1 FROM identities WHERE login_id = 'other@example.com'`);
    expect(rows).to.have.length(0);
  });

  it('creates the users of one request in request order, by (created_at, id), with text kept exactly', async () => {
    const names = ['tab\there', 'back\\slash \\N', 'line\nbreak', 'comma, "quote"', ''];
    const status = await service.run({
      identifier: 'email',
      records: names.map((name, i) => ({ email: `order${i}@example.com`, name })),
    });
    const ids = (status.details as { user_id: string }[]).map((d) => d.user_id);
    const { rows } = await service
      .db()
      .query<{ id: string; name: string }>(
        `SELECT id, standard_attributes->>'name' AS name FROM users WHERE id = ANY($1) ORDER BY created_at, id`,
        [ids],
      );
    expect(rows.map((r) => r.id)).to.deep.equal(ids);
    expect(rows.map((r) => r.name)).to.deep.equal(names);
  });

  it('applies records in request order: a second record for the same user sees the first', async () => {
    const status = await service.run({
      upsert: true,
      identifier: 'email',
      records: [
        { email: 'dana@example.com', name: 'Dana', given_name: 'D' },
        { email: 'DANA@example.com', name: 'Dana Two' },
      ],
    });
    const details = status.details as { outcome: string; user_id: string }[];
    expect(details.map((d) => d.outcome)).to.deep.equal(['inserted', 'updated']);
    expect(details[0]?.user_id).to.equal(details[1]?.user_id);
    const { rows } = await service
      .db()
      .query(`SELECT standard_attributes FROM users WHERE id = $1`, [details[0]?.user_id]);
    expect(rows[0]?.standard_attributes).to.deep.include({ name: 'Dana Two', given_name: 'D' });

    const skipped = await service.run({
      identifier: 'email',
      records: [{ email: 'eve@example.com' }, { email: 'eve@example.com', name: 'Eve' }],
    });
    expect((skipped.details as { outcome: string }[]).map((d) => d.outcome)).to.deep.equal([
      'inserted',
      'skipped',
    ]);
  });

  for (const [identifier, first, again, key, value] of [
    ['email', { email: 'Fay@Example.COM' }, { email: ' fay@example.com ' }, 'email', 'fay@example.com'],
    [
      'preferred_username',
      { preferred_username: 'FayUser' },
      { preferred_username: 'fayuser' },
      'username',
      'fayuser',
    ],
    [
      'phone_number',
      { phone_number: '+447911123456' },
      { phone_number: '+447911123456' },
      'phone',
      '+447911123456',
    ],
  ] as const) {
    it(`matches existing users by ${identifier}, normalized`, async () => {
      const inserted = await service.run({ identifier, records: [first] });
      const again_ = await service.run({
        upsert: true,
        identifier,
        records: [{ ...again, nickname: 'again' }],
      });
      const userId = (inserted.details as { user_id: string }[])[0]?.user_id;
      expect(again_.details).to.have.nested.property('[0].outcome', 'updated');
      expect(again_.details).to.have.nested.property('[0].user_id', userId);
      const res = await service
        .client()
        .graphql(
          `{ getUserByLoginID(loginIDKey: "${key}", loginIDValue: "${value}") { id standardAttributes } }`,
        );
      expect(idOf(res, 'getUserByLoginID')).to.equal(userId);
    });
  }
});
