import { createHash, randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { expect } from 'chai';
import { testBlobConnectionString } from '../../support/blob-containers.js';
import { download, useExportService } from '../../support/exports.js';
import { createUser } from '../../support/users.js';

const CUSTOM_ATTRIBUTES = [
  { name: 'member_id', type: 'string' },
  { name: 'score', type: 'number' },
  { name: 'vip', type: 'boolean' },
];
const TOTP = 'JBSWY3DPEHPK3PXP';

/** RFC 4180 quoting of one cell, for writing the expected files by hand. */
const q = (cell: string) => (/[",\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

const DEFAULT_HEADER =
  'sub,preferred_username,email,phone_number,email_verified,phone_number_verified,name,given_name,' +
  'middle_name,nickname,profile,picture,website,gender,birthdate,zoneinfo,locale,address.street_address,' +
  'address.locality,address.region,address.postal_code,address.country,roles,groups,disabled,identities,' +
  'mfa.emails,mfa.phone_numbers,mfa.totps,biometric_count,passkey_count,custom_attributes.member_id,' +
  'custom_attributes.score,custom_attributes.vip';

describe('export files (CSV and ndjson through the signed URL, Kafka + Azurite)', () => {
  const service = useExportService('kafka', { project: { custom_attributes: CUSTOM_ATTRIBUTES } });
  let ann: string;
  let bob: string;
  let annIdentities: unknown[];
  let annRecord: Record<string, unknown>;
  let bobRecord: Record<string, unknown>;

  before(async () => {
    const db = service.db();
    const project = service.config().project;
    ann = await createUser(db, project, {
      email: 'Ann@Example.com',
      email_verified: true,
      phone_number: '+14155550100',
      preferred_username: 'ann',
      standard: {
        name: 'Ann Lee',
        given_name: 'Ann',
        family_name: 'Lee',
        middle_name: 'Q',
        nickname: 'annie',
        profile: 'https://ex.com/ann',
        picture: 'https://ex.com/ann.png',
        website: 'https://ann.dev',
        gender: 'female',
        birthdate: '1990-01-02',
        zoneinfo: 'Europe/London',
        locale: 'en-GB',
        address: {
          street_address: '1 Main St\nFlat 2',
          locality: 'London',
          region: 'LDN',
          postal_code: 'N1',
          country: 'GB',
        },
      },
      custom: { member_id: 'm-1', score: 42, vip: true },
      roles: ['editor', 'admin'],
      groups: ['staff'],
      oauth: [{ alias: 'google', type: 'google', subjectId: 'g-ann', claims: { email: 'ann@gmail.com' } }],
      createdAt: '2026-01-01T00:00:00Z',
    });
    for (const [type, column, value] of [
      ['oob_otp_email', 'email', 'ann2@example.com'],
      ['oob_otp_sms', 'phone', '+14155550199'],
      ['totp', 'totp_secret', TOTP],
    ] as const) {
      await db.query(
        `INSERT INTO authenticators (id, user_id, kind, type, ${column}) VALUES ($1, $2, 'secondary', $3, $4)`,
        [randomUUID(), ann, type, value],
      );
    }
    await db.query(
      `INSERT INTO authenticators (id, user_id, kind, type, password_hash) VALUES ($1, $2, 'primary', 'password', $3)`,
      [randomUUID(), ann, '$2b$10$abcdefghijklmnopqrstuu5tCNbHRVOZLr6hdMHIu3.E0dqCGfOa2'],
    );
    bob = await createUser(db, project, {
      preferred_username: 'bob',
      standard: { name: 'Bob "B", Jr.' },
      custom: { score: 1.5e-7 },
      disabled: true,
      createdAt: '2026-01-02T00:00:00Z',
    });

    annIdentities = [
      {
        type: 'login_id',
        login_id: {
          key: 'email',
          original_value: 'Ann@Example.com',
          type: 'email',
          value: 'ann@example.com',
        },
        claims: { email: 'ann@example.com' },
      },
      {
        type: 'login_id',
        login_id: { key: 'username', original_value: 'ann', type: 'username', value: 'ann' },
        claims: { preferred_username: 'ann' },
      },
      {
        type: 'login_id',
        login_id: { key: 'phone', original_value: '+14155550100', type: 'phone', value: '+14155550100' },
        claims: { phone_number: '+14155550100' },
      },
      {
        type: 'oauth',
        oauth: {
          provider_alias: 'google',
          provider_type: 'google',
          provider_subject_id: 'g-ann',
          user_profile: { id: 'g-ann', email: 'ann@gmail.com' },
        },
        claims: { email: 'ann@gmail.com' },
      },
    ];
    const totps = [
      {
        secret: TOTP,
        uri: `otpauth://totp/https%3A%2F%2Fadmin.test.example:ann%40example.com?algorithm=SHA1&digits=6&issuer=https%3A%2F%2Fadmin.test.example&period=30&secret=${TOTP}`,
      },
    ];
    // Stored objects (address, custom attributes, profiles) keep Postgres' jsonb member order.
    annRecord = {
      sub: ann,
      preferred_username: 'ann',
      email: 'ann@example.com',
      phone_number: '+14155550100',
      email_verified: true,
      phone_number_verified: false,
      name: 'Ann Lee',
      given_name: 'Ann',
      family_name: 'Lee',
      middle_name: 'Q',
      nickname: 'annie',
      profile: 'https://ex.com/ann',
      picture: 'https://ex.com/ann.png',
      website: 'https://ann.dev',
      gender: 'female',
      birthdate: '1990-01-02',
      zoneinfo: 'Europe/London',
      locale: 'en-GB',
      address: {
        region: 'LDN',
        country: 'GB',
        locality: 'London',
        postal_code: 'N1',
        street_address: '1 Main St\nFlat 2',
      },
      roles: ['admin', 'editor'],
      groups: ['staff'],
      disabled: false,
      identities: annIdentities,
      mfa: { emails: ['ann2@example.com'], phone_numbers: ['+14155550199'], totps },
      biometric_count: 0,
      passkey_count: 0,
      custom_attributes: { vip: true, score: 42, member_id: 'm-1' },
    };
    bobRecord = {
      sub: bob,
      preferred_username: 'bob',
      name: 'Bob "B", Jr.',
      roles: [],
      groups: [],
      disabled: true,
      identities: [
        {
          type: 'login_id',
          login_id: { key: 'username', original_value: 'bob', type: 'username', value: 'bob' },
          claims: { preferred_username: 'bob' },
        },
      ],
      mfa: { emails: [], phone_numbers: [], totps: [] },
      biometric_count: 0,
      passkey_count: 0,
      custom_attributes: { score: 1.5e-7 },
    };
  });

  it('writes the default CSV: every pointer of the spec, then each custom attribute', async () => {
    const done = await service.run({ format: 'csv' });
    expect(done).to.have.keys(
      'id',
      'created_at',
      'status',
      'completed_at',
      'download_url',
      'record_count',
      'file_bytes',
      'file_sha256',
      'changes_cursor',
    );
    const file = await download(done.download_url as string);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('text/csv');
    const name = `default-${done.id}-`;
    expect(file.headers.get('content-disposition')).to.match(
      new RegExp(`^attachment; filename="${name}\\d{14}Z\\.csv"$`),
    );
    const json = (v: unknown) => q(JSON.stringify(v));
    const annRow = [
      ann,
      'ann',
      'ann@example.com',
      '+14155550100',
      'true',
      'false',
      'Ann Lee',
      'Ann',
      'Q',
      'annie',
      'https://ex.com/ann',
      'https://ex.com/ann.png',
      'https://ann.dev',
      'female',
      '1990-01-02',
      'Europe/London',
      'en-GB',
      '"1 Main St\nFlat 2"',
      'London',
      'LDN',
      'N1',
      'GB',
      '"[""admin"",""editor""]"',
      '"[""staff""]"',
      'false',
      json(annIdentities),
      '"[""ann2@example.com""]"',
      '"[""+14155550199""]"',
      json(annRecord.mfa && (annRecord.mfa as { totps: unknown }).totps),
      '0',
      '0',
      'm-1',
      '42',
      'true',
    ].join(',');
    const bobRow = [
      bob,
      'bob',
      '',
      '',
      '',
      '',
      '"Bob ""B"", Jr."',
      ...Array(15).fill(''),
      '[]',
      '[]',
      'true',
      json(bobRecord.identities),
      '[]',
      '[]',
      '[]',
      '0',
      '0',
      '',
      '0.00000015',
      '',
    ].join(',');
    expect(file.text).to.equal(`${DEFAULT_HEADER}\n${annRow}\n${bobRow}\n`);
  });

  it('writes ndjson: one compact record per user, in creation order, without missing members', async () => {
    const done = await service.run({ format: 'ndjson' });
    const file = await download(done.download_url as string);
    expect(file.headers.get('content-type')).to.equal('application/x-ndjson');
    expect(file.headers.get('content-disposition')).to.match(/\.ndjson"$/);
    expect(file.text).to.equal(`${JSON.stringify(annRecord)}\n${JSON.stringify(bobRecord)}\n`);
  });

  it('names the records, bytes and SHA-256 of a completed file, in its status and its blob', async () => {
    const done = await service.run({ format: 'ndjson' });
    const file = await download(done.download_url as string);
    const expected = {
      record_count: 2,
      file_bytes: Buffer.byteLength(file.text),
      file_sha256: createHash('sha256').update(file.text).digest('hex'),
    };
    expect(done).to.deep.include(expected);
    const { rows } = await service
      .db()
      .query<{ file_name: string }>('SELECT file_name FROM tasks WHERE id = $1', [done.id]);
    const blob = BlobServiceClient.fromConnectionString(testBlobConnectionString())
      .getContainerClient(service.config().export.container)
      .getBlobClient(rows[0]?.file_name as string);
    expect((await blob.getProperties()).metadata).to.deep.equal({
      records: '2',
      bytes: String(expected.file_bytes),
      sha256: expected.file_sha256,
    });
  });

  it('writes the requested columns: custom names, array indexes, escaped tokens, missing paths', async () => {
    await service
      .db()
      .query(
        `UPDATE users SET custom_attributes = custom_attributes || '{"a/b": "slash", "c~d": "tilde"}' WHERE id = $1`,
        [ann],
      );
    const done = await service.run({
      format: 'csv',
      csv: {
        fields: [
          { pointer: '/sub', field_name: 'user id' },
          { pointer: '/identities/0/login_id/value' },
          { pointer: '/identities/3/oauth/provider_subject_id', field_name: 'google' },
          { pointer: '/identities/9/type', field_name: 'tenth' },
          { pointer: '/custom_attributes/a~1b' },
          { pointer: '/custom_attributes/c~0d' },
          { pointer: '/address' },
          { pointer: '/mfa/totps/0/secret', field_name: 'totp' },
          { pointer: '/email_verified' },
          { pointer: '/nope/deeper' },
        ],
      },
    });
    const file = await download(done.download_url as string);
    expect(file.text).to.equal(
      'user id,identities.0.login_id.value,google,tenth,custom_attributes.a/b,custom_attributes.c~d,address,totp,email_verified,nope.deeper\n' +
        `${ann},ann@example.com,g-ann,,slash,tilde,${q(JSON.stringify(annRecord.address))},${TOTP},true,\n` +
        `${bob},bob,,,,,,,,\n`,
    );
  });

  it('exports no user as a CSV with only its header, and an empty ndjson file', async () => {
    await service.db().query('DELETE FROM users');
    const csv = await download((await service.run({ format: 'csv' })).download_url as string);
    expect(csv.text).to.equal(`${DEFAULT_HEADER}\n`);
    const ndjson = await download((await service.run({ format: 'ndjson' })).download_url as string);
    expect(ndjson.text).to.equal('');
  });
});
