import { expect } from 'chai';
import { verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { type ExportService, useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { FIREBASE_PARAMS, MALFORMED_PASSWORDS, PASSWORD_VECTORS } from '../../support/password-vectors.js';
import { type TaskEndpoints, taskEndpoints } from '../../support/task-endpoints.js';

// Issue: migrations without loss. A varied project exported as ndjson (with its password hashes),
// imported as it is into an empty project, exported again: the same file.
const PROJECT = {
  oauth_providers: [
    { alias: 'google', type: 'google' },
    { alias: 'company-sso', type: 'azureadv2' },
  ],
  custom_attributes: [
    { name: 'tier', type: 'string' },
    { name: 'score', type: 'number' },
  ],
  password_hashes: {
    export_allowed: true,
    firebase_scrypt: {
      signer_key: FIREBASE_PARAMS.signerKey,
      salt_separator: FIREBASE_PARAMS.saltSeparator,
      rounds: FIREBASE_PARAMS.rounds,
      mem_cost: FIREBASE_PARAMS.memCost,
    },
  },
};

/** An export service that also takes imports, with the project's roles and groups. */
function useProject(): ExportService & { imports: TaskEndpoints } {
  const service = useExportService('postgres', {
    project: PROJECT,
    settings: { trust_proxy: true, export_rate_limit: 100 },
  });
  before(async () => {
    for (const key of ['admin', 'editor', 'viewer']) {
      await service.client().graphql(`mutation { createRole(input: { key: "${key}" }) { role { id } } }`);
    }
    await service.client().graphql(`mutation { createGroup(input: { key: "staff" }) { group { id } } }`);
  });
  return {
    ...service,
    imports: taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS),
  };
}

/** Every kind of member on a few users, and a user per password format (mfa.password too). */
function variedRecords(): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [
    {
      email: 'Ann.Full@Example.com',
      email_verified: true,
      preferred_username: 'AnnF',
      phone_number: '+14155552671',
      phone_number_verified: true,
      name: 'Ann Full',
      given_name: 'Ann',
      family_name: 'Full',
      middle_name: 'M',
      nickname: 'annie',
      profile: 'https://example.com/ann',
      picture: 'https://example.com/ann.png',
      website: 'https://ann.example.com',
      gender: 'female',
      birthdate: '1990-01-02',
      zoneinfo: 'Europe/Paris',
      locale: 'fr-FR',
      address: {
        formatted: '1 Main St, Springfield',
        street_address: '1 Main St',
        locality: 'Springfield',
        region: 'IL',
        postal_code: '62701',
        country: 'US',
      },
      custom_attributes: { tier: 'gold', score: 9.5 },
      roles: ['admin', 'editor'],
      groups: ['staff'],
      identities: [
        {
          type: 'oauth',
          oauth: { provider_alias: 'google', provider_type: 'google', provider_subject_id: 'g-100' },
        },
      ],
      mfa: {
        email: 'ann.mfa@example.com',
        phone_number: '+14155550100',
        totps: [{ secret: 'JBSWY3DPEHPK3PXP' }, { secret: 'KRSXG5CTMVRXEZLU' }],
      },
    },
    {
      email: 'bob@example.com',
      disabled: true,
      account_valid_from: '2026-01-01T09:00:00+09:00',
      account_valid_until: '2027-01-01T00:00:00Z',
      roles: ['viewer'],
      identities: [
        {
          type: 'oauth',
          oauth: {
            provider_alias: 'company-sso',
            provider_type: 'azureadv2',
            provider_subject_id: 'sso-7',
            user_profile: { id: 'sso-7', department: 'R&D' },
          },
          claims: { email: 'Bob@Corp.example', given_name: 'Bob' },
        },
        {
          type: 'oauth',
          oauth: { provider_alias: 'google', provider_type: 'google', provider_subject_id: 'g-200' },
        },
      ],
      mfa: { totp: { secret: 'GEZDGNBVGY3TQOJQ' } },
    },
  ];
  for (const [i, vector] of PASSWORD_VECTORS.entries()) {
    records.push({
      email: `hash${i}@example.com`,
      password: i === 0 ? { ...vector.input, expire_after: '2026-06-01T00:00:00Z' } : vector.input,
      ...(i % 3 === 0 ? { mfa: { password: vector.input } } : {}),
    });
  }
  return records;
}

const ndjsonLines = (text: string) => text.trimEnd().split('\n');

describe('round trip: ndjson export -> import into an empty project -> export', function () {
  this.timeout(120_000);
  const source = useProject();
  const target = useProject();
  let first: string;
  let second: string;
  let imported: Record<string, unknown>;

  const exportNdjson = async (service: ExportService) => {
    const status = await service.run({ format: 'ndjson', include_password_hashes: true });
    expect(status.error, JSON.stringify(status)).to.equal(undefined);
    return (await fetch(status.download_url as string)).text();
  };

  before(async () => {
    const seeded = await source.imports.run({ identifier: 'email', records: variedRecords() });
    expect(seeded.summary).to.deep.include({ inserted: variedRecords().length, failed: 0 });
    first = await exportNdjson(source);
    const records = ndjsonLines(first).map((line) => JSON.parse(line) as Record<string, unknown>);
    imported = await target.imports.run({ identifier: 'email', records });
    second = await exportNdjson(target);
  });

  it('imports every exported record as it is, each inserted under its own id', () => {
    const records = ndjsonLines(first).map((line) => JSON.parse(line) as { sub: string });
    expect(imported.summary).to.deep.include({ total: records.length, inserted: records.length, failed: 0 });
    const details = imported.details as { index: number; user_id: string; warnings?: unknown }[];
    expect(details.map((d) => d.user_id)).to.deep.equal(records.map((r) => r.sub));
    // The export writes the flags of every user: false ones warn on insert (decisions 2.3), as does the
    // legacy hash; nothing else does (no member is unknown or dropped).
    const messages = new Set(
      details.flatMap((d) => (d.warnings ?? []) as { message: string }[]).map((w) => w.message),
    );
    expect([...messages].sort()).to.deep.equal([
      'disabled = false has no effect in insert.',
      'email_verified = false has no effect in insert.',
      'mfa.password is a legacy md5_salted hash: ask the user to set a new password.',
      'password is a legacy md5_salted hash: ask the user to set a new password.',
    ]);
  });

  it('exports the same file again: no member is made anew (sub kept, identities and factors in order)', () => {
    expect(ndjsonLines(second)).to.have.length(variedRecords().length);
    expect(second).to.equal(first);
  });

  it('carries every kind of member through: login ids as given, OAuth connections, factors, hashes', () => {
    const ann = JSON.parse(ndjsonLines(second)[0] ?? '{}');
    expect(ann.identities.map((i: { type: string }) => i.type)).to.deep.equal([
      'oauth',
      'login_id',
      'login_id',
      'login_id',
    ]);
    expect(ann.identities[1].login_id).to.deep.include({
      key: 'email',
      original_value: 'Ann.Full@Example.com',
    });
    expect(ann.mfa.emails).to.deep.equal(['ann.mfa@example.com']);
    expect(ann.mfa.phone_numbers).to.deep.equal(['+14155550100']);
    expect(ann.mfa.totps.map((t: { secret: string }) => t.secret)).to.deep.equal([
      'JBSWY3DPEHPK3PXP',
      'KRSXG5CTMVRXEZLU',
    ]);
    expect(ann).to.deep.include({ roles: ['admin', 'editor'], groups: ['staff'], disabled: false });
    const bob = JSON.parse(ndjsonLines(second)[1] ?? '{}');
    expect(bob.disabled).to.equal(true);
    // The account's period, read as UTC, and a password's expiry go round too.
    expect(bob).to.deep.include({
      account_valid_from: '2026-01-01T00:00:00.000000Z',
      account_valid_until: '2027-01-01T00:00:00.000000Z',
    });
    expect(ann).not.to.have.property('account_valid_from');
    const hashed = ndjsonLines(second).map((l) => JSON.parse(l) as { password?: { expire_after?: string } });
    expect(hashed.filter((r) => r.password?.expire_after).map((r) => r.password?.expire_after)).to.deep.equal(
      ['2026-06-01T00:00:00.000000Z'],
    );
    expect(bob.identities[0]).to.deep.equal({
      type: 'oauth',
      oauth: {
        provider_alias: 'company-sso',
        provider_type: 'azureadv2',
        provider_subject_id: 'sso-7',
        user_profile: { id: 'sso-7', department: 'R&D' },
      },
      claims: { email: 'Bob@Corp.example', given_name: 'Bob' },
    });
  });

  it('keeps each password verifiable in the new project: the plain password passes, another fails', async () => {
    const { rows } = await target.db().query<{ email: string; kind: string; password_hash: string }>(
      `SELECT u.standard_attributes->>'email' AS email, a.kind, a.password_hash
         FROM authenticators a JOIN users u ON u.id = a.user_id WHERE a.type = 'password'`,
    );
    const expected = PASSWORD_VECTORS.length + Math.ceil(PASSWORD_VECTORS.length / 3);
    expect(rows).to.have.length(expected);
    for (const row of rows) {
      const vector = PASSWORD_VECTORS[Number(row.email.replace(/\D/g, ''))];
      if (!vector) expect.fail(`no vector for ${row.email}`);
      expect(await verifyPassword(row.password_hash, vector.plain), `${vector.name} (${row.kind})`).to.equal(
        true,
      );
      expect(await verifyPassword(row.password_hash, `${vector.plain}x`), vector.name).to.equal(false);
    }
  });

  it('finds imported OAuth users by connection and by a claim, through GraphQL', async () => {
    const bob = JSON.parse(ndjsonLines(second)[1] ?? '{}') as { sub: string };
    const byOAuth = await target
      .client()
      .graphql(`{ getUserByOAuth(oauthProviderAlias: "company-sso", oauthProviderUserID: "sso-7") { id } }`);
    expect(byOAuth.errors).to.equal(undefined);
    const found = (byOAuth.data?.getUserByOAuth as { id: string } | undefined)?.id;
    const byClaim = await target
      .client()
      .graphql(
        `{ getUsersByStandardAttribute(attributeName: "email", attributeValue: "bob@corp.example") { id } }`,
      );
    expect(byClaim.errors).to.equal(undefined);
    const ids = (byClaim.data?.getUsersByStandardAttribute as { id: string }[] | undefined)?.map((u) => u.id);
    expect(ids).to.have.length(1);
    expect(found).to.equal(bob.sub);
    expect(ids).to.deep.equal([bob.sub]);
  });
});

describe('import: hash formats, identities and sub refused clearly, one record at a time', function () {
  this.timeout(60_000);
  const service = useProject();

  it('fails each malformed hash alone, naming its format, beside a good record', async () => {
    const records = [
      ...MALFORMED_PASSWORDS.map((password, i) => ({ email: `bad${i}@example.com`, password })),
      { email: 'good@example.com', password: PASSWORD_VECTORS[1]?.input },
    ];
    const status = await service.imports.run({ identifier: 'email', records });
    expect(status.summary).to.deep.include({ inserted: 1, failed: MALFORMED_PASSWORDS.length });
    const details = status.details as { outcome: string; errors?: { info: { causes: unknown[] } }[] }[];
    for (const [i, password] of MALFORMED_PASSWORDS.entries()) {
      const causes = details[i]?.errors?.[0]?.info.causes as {
        location: string;
        details: { message: string };
      }[];
      expect(causes[0]?.location).to.equal('/password/password_hash');
      expect(causes[0]?.details.message).to.include(`not a valid ${password.type} hash`);
    }
    expect(JSON.stringify(details)).not.to.include('tooShort');
  });

  it('refuses an unconfigured provider, a wrong provider type, a taken connection, a taken or moved sub', async () => {
    const sub = '0190a0a0-0000-7000-8000-000000000001';
    const first = await service.imports.run({
      identifier: 'email',
      records: [
        {
          email: 'owner@example.com',
          sub,
          identities: [
            {
              type: 'oauth',
              oauth: { provider_alias: 'google', provider_type: 'google', provider_subject_id: 'g-1' },
            },
          ],
        },
      ],
    });
    expect(first.summary).to.deep.include({ inserted: 1 });
    const status = await service.imports.run({
      identifier: 'email',
      upsert: true,
      records: [
        {
          email: 'a@example.com',
          identities: [
            {
              type: 'oauth',
              oauth: { provider_alias: 'gitlab', provider_type: 'gitlab', provider_subject_id: '1' },
            },
          ],
        },
        {
          email: 'b@example.com',
          identities: [
            {
              type: 'oauth',
              oauth: { provider_alias: 'google', provider_type: 'github', provider_subject_id: '1' },
            },
          ],
        },
        {
          email: 'c@example.com',
          identities: [
            {
              type: 'oauth',
              oauth: { provider_alias: 'google', provider_type: 'google', provider_subject_id: 'g-1' },
            },
          ],
        },
        { email: 'd@example.com', sub },
        { email: 'owner@example.com', sub: '0190a0a0-0000-7000-8000-000000000002' },
        { email: 'e@example.com', sub: 'not-a-uuid' },
        {
          email: 'f@example.com',
          identities: [{ type: 'login_id', login_id: { key: 'email', original_value: 'other@example.com' } }],
        },
      ],
    });
    const details = status.details as {
      outcome: string;
      errors?: { reason: string; info?: { causes?: { location: string; kind: string }[] } }[];
    }[];
    expect(details.map((d) => d.outcome)).to.deep.equal(Array(7).fill('failed'));
    const reasons = details.map((d) => d.errors?.[0]?.reason);
    expect(reasons).to.deep.equal([
      'ValidationFailed',
      'ValidationFailed',
      'DuplicatedIdentity',
      'UserIDConflict',
      'UserIDConflict',
      'ValidationFailed',
      'ValidationFailed',
    ]);
    expect(details[0]?.errors?.[0]?.info?.causes?.[0]).to.deep.include({
      location: '/identities/0/oauth/provider_alias',
    });
    expect(details[1]?.errors?.[0]?.info?.causes?.[0]).to.deep.include({
      location: '/identities/0/oauth/provider_type',
    });
    expect(details[5]?.errors?.[0]?.info?.causes?.[0]).to.deep.include({ location: '/sub' });
    expect(details[6]?.errors?.[0]?.info?.causes?.[0]).to.deep.include({ kind: 'conflict' });
  });

  it('ignores the export counts with a warning, and an update replaces the OAuth connections listed', async () => {
    const status = await service.imports.run({
      identifier: 'email',
      upsert: true,
      records: [{ email: 'owner@example.com', biometric_count: 2, passkey_count: 0, identities: [] }],
    });
    const detail = (status.details as { outcome: string; warnings?: { message: string }[] }[])[0];
    expect(detail?.outcome).to.equal('updated');
    expect(detail?.warnings?.map((w) => w.message)).to.deep.equal([
      'biometric_count is ignored: 2 biometrics cannot be imported.',
    ]);
    const { rows } = await service.db().query(`SELECT 1 FROM identities WHERE type = 'oauth'`);
    expect(rows).to.have.length(0);
  });
});

describe('export: include_password_hashes', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { settings: { export_rate_limit: 100 } });

  it('is refused unless the project allows it, and for CSV', async () => {
    const forbidden = await service.post({ format: 'ndjson', include_password_hashes: true });
    expect(forbidden.statusCode).to.equal(403);
    expect(JSON.parse(forbidden.body).error).to.deep.include({ reason: 'PasswordHashExportNotAllowed' });
    const csv = await service.post({ format: 'csv', include_password_hashes: true });
    expect(csv.statusCode).to.equal(400);
  });

  it('leaves the hashes out when not asked for', async () => {
    await service.db().query(
      `INSERT INTO users (id, project_id) VALUES ('0190a0a0-0000-7000-8000-0000000000aa', 'default');
       INSERT INTO authenticators (id, user_id, kind, type, password_hash)
       VALUES (gen_random_uuid(), '0190a0a0-0000-7000-8000-0000000000aa', 'primary', 'password', '$2b$10$abc')`,
    );
    const status = await service.run({ format: 'ndjson' });
    const text = await (await fetch(status.download_url as string)).text();
    expect(text).not.to.include('password');
  });
});
