import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { to as copyTo } from 'pg-copy-streams';
import { configFromDocument } from '../../../pipeline/config.js';
import { decodeCopyField } from '../../../pipeline/db/copy-text.js';
import type { Pool } from '../../../pipeline/db/pool.js';
import { withSnapshot } from '../../../pipeline/db/transaction.js';
import { CopyRecords, RecordAssembler } from '../../../pipeline/export/assemble-records.js';
import { csvText } from '../../../pipeline/export/encode-csv.js';
import { ndjsonText } from '../../../pipeline/export/encode-ndjson.js';
import { encodeRecords } from '../../../pipeline/export/encode-records.js';
import { type ExportField, pointedMembers } from '../../../pipeline/export/pointers.js';
import {
  type ExportFilters,
  prepareSnapshot,
  recordsStatement,
  type SnapshotSettings,
  streamUserRows,
} from '../../../pipeline/export/user-rows.js';
import { useTestSchema } from '../../support/database.js';
import { jsonRecordsSql } from '../../support/json-records-sql.js';
import { createUser, type FixtureUser } from '../../support/users.js';

// Issue: export at the speed of reading the data. The worker assembles each record from plain
// rows; the file must hold what Postgres's JSON functions wrote before, record for record.

const ISSUER = 'https://auth.example.com';

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

/**
 * Values Postgres and JavaScript treat differently, stored where the records take them from jsonb:
 * nulls at every depth (dropped from objects, kept in arrays), index-like keys, numbers with a
 * fraction or an exponent or too long for a double, escapes and characters outside ASCII, claims
 * whose names sort differently by jsonb's order (length first) than by text, a login id with no
 * stored claims but three claim columns, a user whose email is null.
 */
async function storeAwkwardValues(db: Pool): Promise<void> {
  const awkward = await createUser(db, PROJECT, {
    email: 'jo+tag@example.com',
    preferred_username: 'awkward',
    createdAt: '2026-03-01T00:00:00Z',
    oauth: [{ alias: 'google', type: 'google', subjectId: 'g-awkward' }],
  });
  await db.query(
    `UPDATE users SET
       standard_attributes = standard_attributes || $2::jsonb,
       custom_attributes = $3::jsonb
     WHERE id = $1`,
    [
      awkward,
      '{"email": "josé+tag!(x)*\'@exämple.com", "name": "line\\nbreak\\ttab \\"q\\" back\\\\slash \\u0001 \\u2028 é 😀", "address": {"locality": null, "country": "US", "postal_code": "1e5"}}',
      '{"b": 1, "10": 2, "1": 3, "a": [1, 2.25, null, {"0": "x", "n": null}], "nested": {"k": null, "keep": 1.5e-7}, "big": 12345678901234567890, "e": 1e21, "odd": 9007199254740993, "gone": null, "text": "null"}',
    ],
  );
  await db.query(
    `UPDATE identities SET claims = $2::jsonb WHERE user_id = $1 AND type = 'login_id' AND login_id_key = 'email'`,
    [
      awkward,
      '{"zz": 1, "éé": 2, "a": null, "phone_number": null, "x_long_claim_name": [null, {"k": null}]}',
    ],
  );
  await db.query(
    `UPDATE identities SET claims = $2::jsonb WHERE user_id = $1 AND type = 'login_id' AND login_id_key = 'username'`,
    [awkward, '{"preferred_username": "stale", "email": "other@example.com", "b": true}'],
  );
  await db.query(
    `UPDATE identities SET claims = $2::jsonb, profile = $3::jsonb WHERE user_id = $1 AND type = 'oauth'`,
    [
      awkward,
      '{"email": null, "7": "seven", "sub": "g-awkward"}',
      '{"picture": null, "locale": "fr", "list": [null]}',
    ],
  );
  await db.query(
    `INSERT INTO authenticators (id, user_id, kind, type, totp_secret) VALUES ($1, $2, 'secondary', 'totp', 'MZXW6YTBOI')`,
    [randomUUID(), awkward],
  );
  // A login id with no stored claims and every claim column set: its claims are the columns alone.
  const columns = await createUser(db, PROJECT, {
    email: 'cols@example.com',
    createdAt: '2026-03-01T12:00:00Z',
  });
  await db.query(
    `UPDATE identities SET claims = '{}', phone_number = '+15550100', preferred_username = 'cols'
      WHERE user_id = $1 AND type = 'login_id' AND login_id_key = 'email'`,
    [columns],
  );
  // Times whose text Postgres writes otherwise than most: no fraction, a short one, a year of two
  // digits, of five, before the common era, infinite.
  const times = await createUser(db, PROJECT, { createdAt: '2026-03-01T18:00:00Z' });
  await db.query(
    `UPDATE users SET updated_at = '2026-03-01 18:00:00.1+00', last_login_at = '0099-01-02 03:04:05.5+00',
       account_valid_from = '0044-03-15 12:00:00+00 BC', account_valid_until = 'infinity'
     WHERE id = $1`,
    [times],
  );
  await db.query(
    `INSERT INTO authenticators (id, user_id, kind, type, password_hash, expire_after)
     VALUES ($1, $2, 'primary', 'password', $3, '12345-01-02 03:04:05.000001+00')`,
    [randomUUID(), times, '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'],
  );
  const nullEmail = await createUser(db, PROJECT, { createdAt: '2026-03-02T00:00:00Z' });
  await db.query(
    `UPDATE users SET standard_attributes = '{"email": null, "phone_number": null, "given_name": "N"}' WHERE id = $1`,
    [nullEmail],
  );
  await db.query(
    `INSERT INTO authenticators (id, user_id, kind, type, totp_secret) VALUES ($1, $2, 'secondary', 'totp', 'ONSWG4TFOQ')`,
    [randomUUID(), nullEmail],
  );
}

/** Reads a COPY statement's output whole. */
async function copyText(stream: NodeJS.ReadableStream, ...stages: NodeJS.ReadWriteStream[]) {
  let text = '';
  await pipeline([
    stream,
    ...stages,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    }),
  ]);
  return text.split('\n').filter((line) => line !== '');
}

/** The ndjson lines the export writes now: plain rows assembled by the worker. */
async function assembledLines(db: Pool, settings: SnapshotSettings): Promise<string[]> {
  return withSnapshot(db, async (client) => {
    await prepareSnapshot(client, 'default', settings);
    return copyText(
      streamUserRows(client, settings),
      encodeRecords(new CopyRecords({ totpIssuer: ISSUER }), ndjsonText(), () => {}),
    );
  });
}

/**
 * The CSV lines of `fields`, from the records statement and assembly of `members` (every member:
 * undefined), with times and password hashes.
 */
async function csvLines(
  db: Pool,
  fields: readonly ExportField[],
  members: ReadonlySet<string> | undefined,
): Promise<string[]> {
  const settings: SnapshotSettings = { times: true, passwordHashes: true, ...(members ? { members } : {}) };
  return withSnapshot(db, async (client) => {
    await prepareSnapshot(client, 'default', settings);
    return copyText(
      streamUserRows(client, settings),
      encodeRecords(
        new CopyRecords({ totpIssuer: ISSUER, ...(members ? { members } : {}) }),
        csvText(fields, {}),
        () => {},
      ),
    );
  });
}

/** The ndjson lines the export wrote when Postgres built the JSON (JSON.stringify of each). */
async function referenceLines(db: Pool, settings: SnapshotSettings): Promise<string[]> {
  return withSnapshot(db, async (client) => {
    await prepareSnapshot(client, 'default', settings);
    await client.query(
      `SELECT set_config('export.totp_issuer', $1, true), set_config('export.times', $2, true),
              set_config('export.password_hashes', $3, true)`,
      [ISSUER, settings.times ? 'on' : '', settings.passwordHashes ? 'on' : ''],
    );
    const sql = jsonRecordsSql({ filtered: true });
    const lines = await copyText(client.query(copyTo(`COPY (${sql}) TO STDOUT`)));
    return lines.map((line) => JSON.stringify(JSON.parse(decodeCopyField(line))));
  });
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Sort Key'?: string[];
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Plans?: PlanNode[];
}

/** The plan of the records statement under the export's settings (prepareSnapshot). */
async function recordsPlan(db: Pool, settings: SnapshotSettings): Promise<PlanNode> {
  return withSnapshot(db, async (client) => {
    await prepareSnapshot(client, 'default', settings);
    const { rows: jit } = await client.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`);
    expect(jit[0]?.jit, 'JIT compiling holds the first row back').to.equal('off');
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (FORMAT JSON) ${recordsStatement(settings)}`,
    );
    return rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode;
  });
}

/** The node and every node under it. */
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

const FILTERS: readonly ExportFilters[] = [
  {},
  { created_after: '2026-01-01T00:00:02Z' },
  { updated_since: '2026-02-01T00:00:00Z' },
  { disabled: true },
  { disabled: false, created_after: '2025-12-31T00:00:00Z' },
];

describe('export record assembly', () => {
  const db = useTestSchema();
  before(async () => {
    await storeUsers(db());
    await storeAwkwardValues(db());
  });

  for (const [times, passwordHashes] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`writes what Postgres's JSON functions wrote, record for record (times ${times}, hashes ${passwordHashes}, every filter)`, async () => {
      for (const filters of FILTERS) {
        const settings = { filters, times, passwordHashes };
        const expected = await referenceLines(db(), settings);
        const actual = await assembledLines(db(), settings);
        if (Object.keys(filters).length === 0) expect(expected).to.have.length(USERS.length + 6);
        expect(actual, JSON.stringify(filters)).to.deep.equal(expected);
      }
    });
  }

  it('carries every kind of member', async () => {
    const [ann] = (await assembledLines(db(), { passwordHashes: true })).map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    );
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

  it('never reads a password hash unless the export asked for them', async () => {
    const text = (await assembledLines(db(), {})).join('\n');
    expect(text).to.not.include('$2b$10$');
    expect(text).to.not.include('$argon2id$');
  });

  it('streams: Postgres merges the ordered branches in the whole order and sorts nothing after', async () => {
    for (const settings of [{}, { filters: { disabled: false }, times: true, passwordHashes: true }]) {
      const plan = await recordsPlan(db(), settings);
      expect(plan['Node Type'], JSON.stringify(settings)).to.equal('Merge Append');
      expect(plan['Sort Key']).to.have.length(6);
      expect(planNodes(plan).map((node) => node['Node Type'])).to.not.include('Sort');
    }
  });

  it("reads and builds only the members a CSV's fields point at, and writes the same cells", async () => {
    // Each with a value of Ann's that only its related rows give (or, the first, her own row).
    const cases: [string[], string][] = [
      [['/sub', '/email', '/custom_attributes/tier'], 'ann.full@example.com,gold'],
      [['/email_verified', '/roles'], 'true,"[""admin"",""editor""]"'],
      [['/phone_number_verified', '/groups', '/password/type'], 'true,"[""beta"",""staff""]",bcrypt'],
      [['/mfa/totps/0/secret', '/mfa/password/type'], 'JBSWY3DPEHPK3PXP,argon2id'],
      [['/identities/4/oauth/provider_subject_id'], 's-1'],
    ];
    for (const [pointers, ann] of cases) {
      const fields = pointers.map((pointer) => ({ pointer, field_name: pointer }));
      const narrow = await csvLines(db(), fields, pointedMembers(fields));
      expect(narrow, pointers.join()).to.deep.equal(await csvLines(db(), fields, undefined));
      expect(narrow[1], pointers.join()).to.include(ann);
    }
    const tables = async (members: string[]) =>
      new Set(
        planNodes(await recordsPlan(db(), { members: new Set(members) })).flatMap(
          (n) => n['Relation Name'] ?? [],
        ),
      );
    expect(await tables(['sub', 'email', 'custom_attributes'])).to.deep.equal(new Set(['users']));
    expect(await tables(['roles', 'mfa'])).to.deep.equal(
      new Set(['users', 'user_roles', 'roles', 'authenticators']),
    );
  });

  it("reads a part's range of users through the creation-order index, not every user", async () => {
    const bound = { at: '2026-01-01 00:00:01+00', id: randomUUID() };
    for (const range of [{ after: bound }, { through: bound }, { after: bound, through: bound }]) {
      const part = { after: undefined, through: undefined, ...range };
      const scans = planNodes(await recordsPlan(db(), { part })).filter(
        (n) => n['Relation Name'] === 'users',
      );
      expect(scans, JSON.stringify(range)).to.have.length(6); // one per branch
      for (const scan of scans)
        expect(scan['Index Cond'], JSON.stringify(range)).to.include('ROW(created_at, id)');
    }
  });

  it("finds users' second factors in their own index, without visiting primary passwords", async () => {
    const scans = planNodes(await recordsPlan(db(), {})).filter(
      (n) => n['Relation Name'] === 'authenticators',
    );
    expect(scans.map((n) => n['Index Name'])).to.deep.equal(['authenticators_secondary']);
  });

  it('refuses rows that belong to no user', () => {
    const assembler = new RecordAssembler({ totpIssuer: ISSUER });
    expect(() => assembler.add('2\tadmin')).to.throw(/unexpected records row/);
    expect(() => assembler.add('0\tuser-id')).to.not.throw();
    expect(() => assembler.add('9\tx')).to.throw(/unexpected records row/);
    expect(() => assembler.add('12\tx')).to.throw(/unexpected records row/);
  });
});
