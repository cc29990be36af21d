import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { to as copyTo } from 'pg-copy-streams';
import { configFromDocument } from '../../../pipeline/config.js';
import type { Pool } from '../../../pipeline/db/pool.js';
import { asJavaScriptWrites } from '../../../pipeline/export/encode-ndjson.js';
import { prepareSnapshot, type SnapshotSettings } from '../../../pipeline/export/export-records.js';
import { userRecordsSql } from '../../../pipeline/export/user-records-sql.js';
import { useTestSchema } from '../../support/database.js';
import { createUser, type FixtureUser } from '../../support/users.js';

// Issue: export at the speed of reading the data. The records statement with and without its
// filter condition, and the ndjson lines written as Postgres wrote them.

const PROJECT = configFromDocument({
  project: {
    oauth_providers: [
      { alias: 'google', type: 'google' },
      { alias: 'company-sso', type: 'azureadv2' },
    ],
  },
}).project;

/** Users with every kind of member, and users with none. */
const USERS: readonly (FixtureUser & { factors?: readonly Factor[] })[] = [
  {
    email: 'Ann.Full@Example.com',
    email_verified: true,
    preferred_username: 'AnnF',
    phone_number: '+14155552671',
    phone_number_verified: true,
    standard: {
      given_name: 'Ann',
      address: { locality: 'Springfield', country: 'US' },
      birthdate: '1990-01-02',
    },
    custom: { tier: 'gold' },
    roles: ['editor', 'admin'],
    groups: ['staff', 'beta'],
    oauth: [
      { alias: 'google', type: 'google', subjectId: 'g-1', claims: { email: 'Ann@Gmail.example' } },
      { alias: 'company-sso', type: 'azureadv2', subjectId: 's-1' },
    ],
    factors: [
      ['primary', 'password', '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'],
      [
        'secondary',
        'password',
        '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GDPPc',
      ],
      ['secondary', 'oob_otp_email', 'ann.mfa@example.com'],
      ['secondary', 'oob_otp_sms', '+14155550100'],
      ['secondary', 'totp', 'JBSWY3DPEHPK3PXP'],
      ['secondary', 'totp', 'KRSXG5CTMVRXEZLU'],
    ],
  },
  { email: 'unverified@example.com', email_verified: false, disabled: true },
  {
    phone_number: '+14155550111',
    phone_number_verified: true,
    factors: [['secondary', 'totp', 'GEZDGNBVGY3TQOJQ']],
  },
  {
    preferred_username: 'only_name',
    roles: ['viewer'],
    factors: [['primary', 'password', '$sha256-salted$pos=prefix$c2FsdA$ZGlnZXN0']],
  },
  {},
  { email: 'oauth.only@example.com', oauth: [{ alias: 'google', type: 'google', subjectId: 'g-2' }] },
  { email: 'mfa@example.com', factors: [['secondary', 'oob_otp_email', 'second@example.com']] },
];

/** An authenticator of a fixture user: kind, type, and its hash, email, phone or secret. */
type Factor = readonly [
  'primary' | 'secondary',
  'password' | 'oob_otp_email' | 'oob_otp_sms' | 'totp',
  string,
];

const FACTOR_COLUMN = {
  password: 'password_hash',
  oob_otp_email: 'email',
  oob_otp_sms: 'phone',
  totp: 'totp_secret',
};

async function storeUsers(db: Pool): Promise<void> {
  for (const [n, user] of USERS.entries()) {
    const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
    const id = await createUser(db, PROJECT, { ...user, createdAt });
    for (const [kind, type, value] of user.factors ?? []) {
      await db.query(
        `INSERT INTO authenticators (id, user_id, kind, type, ${FACTOR_COLUMN[type]}) VALUES ($1, $2, $3, $4, $5)`,
        [randomUUID(), id, kind, type, value],
      );
    }
  }
  // Two users created at the same instant: the id decides their order.
  for (let k = 0; k < 2; k++)
    await createUser(db, PROJECT, { email: `same${k}@example.com`, createdAt: '2026-02-01T00:00:00Z' });
}

/** The lines a records statement writes under the settings, as COPY writes them. */
async function recordLines(db: Pool, sql: string, settings: SnapshotSettings): Promise<string[]> {
  const client = await db.connect();
  try {
    await prepareSnapshot(client, 'https://auth.example.com', settings);
    let text = '';
    await pipeline(
      client.query(copyTo(`COPY (${sql}) TO STDOUT`)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          text += chunk.toString();
          done();
        },
      }),
    );
    await client.query('COMMIT');
    return text.split('\n').filter((line) => line !== '');
  } finally {
    client.release();
  }
}

describe('export records statement', () => {
  const db = useTestSchema();
  before(async () => storeUsers(db()));

  for (const [times, passwordHashes] of [
    [false, false],
    [true, true],
  ] as const) {
    it(`without filters, the statement without a condition writes what the filtered one does (times ${times}, hashes ${passwordHashes})`, async () => {
      const settings = { times, passwordHashes };
      const expected = await recordLines(db(), userRecordsSql({ filtered: true }), settings);
      const actual = await recordLines(db(), userRecordsSql({ filtered: false }), settings);
      expect(expected).to.have.length(USERS.length + 2);
      expect(actual).to.deep.equal(expected);
    });
  }

  it('carries every kind of member', async () => {
    const [ann] = (
      await recordLines(db(), userRecordsSql({ filtered: false }), { passwordHashes: true })
    ).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(ann).to.include({
      email: 'ann.full@example.com',
      email_verified: true,
      phone_number_verified: true,
    });
    expect(ann?.roles).to.deep.equal(['admin', 'editor']);
    expect(ann?.groups).to.deep.equal(['beta', 'staff']);
    expect(ann?.identities).to.have.length(5);
    expect(ann?.password).to.deep.equal({
      type: 'bcrypt',
      password_hash: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy',
    });
    const mfa = ann?.mfa as Record<string, unknown>;
    expect(mfa.emails).to.deep.equal(['ann.mfa@example.com']);
    expect(mfa.phone_numbers).to.deep.equal(['+14155550100']);
    expect((mfa.totps as { secret: string }[]).map((t) => t.secret)).to.deep.equal([
      'JBSWY3DPEHPK3PXP',
      'KRSXG5CTMVRXEZLU',
    ]);
    expect(mfa.password).to.have.property('type', 'argon2id');
  });

  it('writes each record as JSON.stringify would (numbers, index-like keys, escapes), as the export always did', async () => {
    // JSON texts as they reach a jsonb column (long integers written out, as a client may send them).
    const texts: string[] = [
      '1.5e-7',
      '1e21',
      '2.50',
      '-0.001',
      '42',
      '9007199254740993',
      '12345678901234567890',
      '100',
      ...[
        { b: 1, 10: 2, 1: 3, a: [1, 2.25, { 0: 'x' }] },
        'line\nbreak\ttab "quoted" back\\slash \u0001 \u001f \u007f \u2028 é 😀 1.5e3 "7": 1234567890123456789',
        { 'user1.5': 'v2.0', id: 'g-1e9' },
        [true, false, null, {}],
      ].map((value) => JSON.stringify(value)),
    ];
    for (const text of texts) {
      const { rows } = await db().query<{ json: string }>(
        "SELECT json_strip_nulls(json_build_object('sub', 'x', 'v', $1::jsonb))::text AS json",
        [text],
      );
      const json = rows[0]?.json ?? '';
      expect(asJavaScriptWrites(json), json).to.equal(JSON.stringify(JSON.parse(json)));
    }
  });
});
