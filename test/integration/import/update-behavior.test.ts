import { expect } from 'chai';
import { useImportService } from '../../support/imports.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

/** Spec 3.2, row by row, through the embedded (Postgres queue) transport. */
describe('import update behavior (decisions 3.2)', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {
    custom_attributes: [
      { name: 'tier', type: 'enum', enum: ['gold', 'silver'] },
      { name: 'score', type: 'integer' },
    ],
  });
  let n = 0;

  before(async () => {
    for (const key of ['r1', 'r2', 'r3'])
      await service.client().graphql(`mutation { createRole(input: { key: "${key}" }) { role { id } } }`);
    for (const key of ['g1', 'g2'])
      await service.client().graphql(`mutation { createGroup(input: { key: "${key}" }) { group { id } } }`);
  });

  /** Inserts a user from `first`, then updates it with `second`; returns the user's stored state. */
  async function insertThenUpdate(first: Record<string, unknown>, second: Record<string, unknown>) {
    n++;
    const email = `user${n}@example.com`;
    await service.run({ identifier: 'email', records: [{ email, ...first }] });
    const status = await service.run({ upsert: true, identifier: 'email', records: [{ email, ...second }] });
    const detail = (status.details as Record<string, unknown>[])[0] as {
      outcome: string;
      user_id: string;
      warnings?: unknown[];
    };
    expect(detail.outcome, JSON.stringify(status.details)).to.equal('updated');
    const { rows } = await service.db().query(
      `SELECT u.standard_attributes AS standard, u.custom_attributes AS custom, u.is_disabled AS disabled,
              (SELECT coalesce(json_agg(i.login_id_key || '=' || i.login_id ORDER BY i.login_id_key), '[]')
                 FROM identities i WHERE i.user_id = u.id) AS login_ids,
              (SELECT coalesce(json_agg(v.name || '=' || v.value ORDER BY v.name), '[]')
                 FROM verified_claims v WHERE v.user_id = u.id) AS verified,
              (SELECT coalesce(json_agg(a.type || '=' || coalesce(a.email, a.phone, a.password_hash, a.totp_secret)
                                        ORDER BY a.kind, a.type), '[]')
                 FROM authenticators a WHERE a.user_id = u.id) AS authenticators,
              (SELECT coalesce(json_agg(r.key ORDER BY r.key), '[]') FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                WHERE ur.user_id = u.id) AS roles,
              (SELECT coalesce(json_agg(g.key ORDER BY g.key), '[]') FROM user_groups ug JOIN groups g ON g.id = ug.group_id
                WHERE ug.user_id = u.id) AS groups
         FROM users u WHERE u.id = $1`,
      [detail.user_id],
    );
    return { email, warnings: detail.warnings, ...rows[0] } as {
      email: string;
      warnings: unknown[] | undefined;
      standard: Record<string, unknown>;
      custom: Record<string, unknown>;
      disabled: boolean;
      login_ids: string[];
      verified: string[];
      authenticators: string[];
      roles: string[];
      groups: string[];
    };
  }

  it('login ids other than the identifier: present updates, null removes, absent keeps', async () => {
    const u = await insertThenUpdate(
      { preferred_username: 'old_name', phone_number: '+14155550101' },
      { preferred_username: 'New_Name', phone_number: null },
    );
    expect(u.login_ids).to.deep.equal([`email=${u.email}`, 'username=new_name']);
    expect(u.standard).to.include({ preferred_username: 'new_name' }).and.not.have.property('phone_number');
    const kept = await insertThenUpdate({ preferred_username: 'keeper' }, { name: 'x' });
    expect(kept.login_ids).to.deep.equal([`email=${kept.email}`, 'username=keeper']);
  });

  it('a login id can be added by a later import', async () => {
    const u = await insertThenUpdate({}, { phone_number: '+14155550102' });
    expect(u.login_ids).to.deep.equal([`email=${u.email}`, 'phone=+14155550102']);
  });

  it('verified flags: present updates, absent keeps; absent on first import means unverified', async () => {
    const u = await insertThenUpdate({ phone_number: '+14155550103' }, { email_verified: true });
    expect(u.verified).to.deep.equal([`email=${u.email}`]);
    const kept = await insertThenUpdate({ email_verified: true }, { name: 'x' });
    expect(kept.verified).to.deep.equal([`email=${kept.email}`]);
    const cleared = await insertThenUpdate({ email_verified: true }, { email_verified: false });
    expect(cleared.verified).to.deep.equal([]);
  });

  it('other standard attributes: present updates, null deletes, absent keeps; address is replaced whole', async () => {
    const u = await insertThenUpdate(
      { name: 'A', given_name: 'G', nickname: 'N', address: { country: 'US', locality: 'SF', region: 'CA' } },
      { name: 'B', nickname: null, address: { country: 'JP' } },
    );
    expect(u.standard).to.deep.equal({
      email: u.email,
      name: 'B',
      given_name: 'G',
      address: { country: 'JP' },
    });
  });

  it('custom attributes: per attribute, null deletes, absent keeps', async () => {
    const u = await insertThenUpdate(
      { custom_attributes: { tier: 'gold', score: 3 } },
      { custom_attributes: { tier: null } },
    );
    expect(u.custom).to.deep.equal({ score: 3 });
    const set = await insertThenUpdate(
      { custom_attributes: { tier: 'gold' } },
      { custom_attributes: { score: 9 } },
    );
    expect(set.custom).to.deep.equal({ tier: 'gold', score: 9 });
  });

  it('roles and groups: when present the set becomes exactly the list; absent keeps', async () => {
    const u = await insertThenUpdate({ roles: ['r1', 'r2'], groups: ['g1'] }, { roles: ['r2', 'r3'] });
    expect(u.roles).to.deep.equal(['r2', 'r3']);
    expect(u.groups).to.deep.equal(['g1']);
    const cleared = await insertThenUpdate(
      { roles: ['r1'], groups: ['g1', 'g2'] },
      { roles: [], groups: ['g2'] },
    );
    expect(cleared.roles).to.deep.equal([]);
    expect(cleared.groups).to.deep.equal(['g2']);
  });

  it('disabled: present updates, omitted keeps a previously set state', async () => {
    expect((await insertThenUpdate({ disabled: true }, { name: 'x' })).disabled).to.equal(true);
    expect((await insertThenUpdate({ disabled: true }, { disabled: false })).disabled).to.equal(false);
  });

  it('password, mfa.password and mfa.totp are ignored for an existing user, with warnings', async () => {
    const u = await insertThenUpdate(
      {},
      {
        password: { type: 'bcrypt', password_hash: HASH },
        mfa: { password: { type: 'bcrypt', password_hash: HASH }, totp: { secret: 'JBSWY3DPEHPK3PXP' } },
      },
    );
    expect(u.authenticators).to.deep.equal([]);
    expect(u.warnings).to.deep.equal([
      { message: 'password is ignored because the user exists already.' },
      { message: 'mfa.password is ignored because the user exists already.' },
      { message: 'mfa.totp is ignored because the user exists already.' },
    ]);
    const kept = await insertThenUpdate(
      { password: { type: 'bcrypt', password_hash: HASH } },
      {
        password: {
          type: 'bcrypt',
          password_hash: '$2b$10$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
        },
      },
    );
    expect(kept.authenticators).to.deep.equal([`password=${HASH}`]);
  });

  it('mfa.email and mfa.phone_number: present updates, null deletes, absent keeps', async () => {
    const u = await insertThenUpdate(
      { mfa: { email: 'a@mfa.example.com', phone_number: '+14155550104' } },
      { mfa: { email: 'b@mfa.example.com', phone_number: null } },
    );
    expect(u.authenticators).to.deep.equal(['oob_otp_email=b@mfa.example.com']);
    const kept = await insertThenUpdate({ mfa: { phone_number: '+14155550105' } }, { name: 'x' });
    expect(kept.authenticators).to.deep.equal(['oob_otp_sms=+14155550105']);
  });

  it('an undeclared custom attribute is ignored with a warning', async () => {
    const u = await insertThenUpdate({}, { custom_attributes: { nope: 1 } });
    expect(u.custom).to.deep.equal({});
    expect(u.warnings).to.deep.equal([{ message: 'custom_attributes.nope is not defined.' }]);
  });

  it('a custom attribute of the wrong type fails the record', async () => {
    const status = await service.run({
      identifier: 'email',
      records: [{ email: 'typed@example.com', custom_attributes: { score: 'x' } }],
    });
    const detail = (status.details as { outcome: string; errors: { info: { causes: unknown[] } }[] }[])[0];
    expect(detail?.outcome).to.equal('failed');
    expect(detail?.errors[0]?.info.causes).to.deep.equal([
      { location: '/custom_attributes/score', kind: 'type', details: { message: 'must be an integer' } },
    ]);
  });
});

describe('import warnings on insert', function () {
  this.timeout(60_000);
  const service = useImportService('postgres');

  it('says which values have no effect on a new user, with the exact texts', async () => {
    const status = await service.run({
      identifier: 'email',
      records: [
        {
          email: 'w1@example.com',
          phone_number: null,
          preferred_username: null,
          email_verified: false,
          phone_number_verified: true,
          disabled: false,
          mfa: { email: null, phone_number: null },
        },
        {
          preferred_username: 'w2',
          email: 'w2@example.com',
          email_verified: true,
          phone_number_verified: false,
        },
      ],
    });
    const details = status.details as { warnings?: { message: string }[] }[];
    expect(details[0]?.warnings?.map((w) => w.message)).to.deep.equal([
      'phone_number = null has no effect in insert.',
      'preferred_username = null has no effect in insert.',
      'mfa.email = null has no effect in insert.',
      'mfa.phone_number = null has no effect in insert.',
      'email_verified = false has no effect in insert.',
      'phone_number_verified = true has no effect when phone_number is absent.',
      'disabled = false has no effect in insert.',
    ]);
    expect(details[1]?.warnings?.map((w) => w.message)).to.deep.equal([
      'phone_number_verified = false has no effect in insert.',
    ]);
  });

  it('warns that email_verified = true has no effect without an email', async () => {
    const status = await service.run({
      identifier: 'preferred_username',
      records: [{ preferred_username: 'w3', email_verified: true }],
    });
    expect((status.details as { warnings: unknown[] }[])[0]?.warnings).to.deep.equal([
      { message: 'email_verified = true has no effect when email is absent.' },
    ]);
  });
});
