import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import {
  assembleRecords,
  RecordAssembler,
  rfc3339Time,
  type UserRecord,
} from '../../../pipeline/export/assemble-records.js';

// The records statement's COPY text rows: a kind digit, then its values, `\N` for null.
const row = (kind: number, ...values: (string | null)[]) =>
  [
    String(kind),
    ...values.map((v) => (v === null ? '\\N' : v.replaceAll('\\', '\\\\').replaceAll('\t', '\\t'))),
  ].join('\t');
const user = (id: string, standard: object, custom: object | null = null, disabled = false) =>
  row(
    0,
    id,
    String(disabled),
    JSON.stringify(standard),
    custom && JSON.stringify(custom),
    null,
    null,
    null,
    null,
    null,
  );

const nulls = (n: number) => Array.from({ length: n }, () => null);

const LINES = [
  user('u-1', { email: 'zoë@example.com', name: 'Zoë', nickname: null }, { tier: 'gold', gone: null }),
  row(2, 'admin'),
  row(3, 'staff'),
  row(5, 'email', 'zoë@example.com'),
  user('u-2', { phone_number: '+14155552671' }, null, true),
];

describe('export: records assembled from the rows of the records statement', () => {
  it("builds each user's record from its own row and the rows after it, members without nulls", () => {
    const assembler = new RecordAssembler({ totpIssuer: 'https://auth.example.com' });
    const records = [...LINES.map((l) => assembler.add(l)), assembler.end()].filter((r) => r !== undefined);
    expect(records).to.have.length(2);
    const [first, second] = records as UserRecord[];
    expect(first).to.deep.include({
      sub: 'u-1',
      email: 'zoë@example.com',
      email_verified: true,
      name: 'Zoë',
      roles: ['admin'],
      groups: ['staff'],
      disabled: false,
      custom_attributes: { tier: 'gold' },
    });
    expect(first).not.to.have.property('nickname');
    expect(second).to.deep.include({ sub: 'u-2', phone_number: '+14155552671', disabled: true, roles: [] });
  });

  it('refuses a row of no kind it knows, and a row before any user', () => {
    expect(() => new RecordAssembler({ totpIssuer: 'x' }).add('9\tx')).to.throw(
      /unexpected records row: kind 9/,
    );
    expect(() => new RecordAssembler({ totpIssuer: 'x' }).add(row(2, 'admin'))).to.throw(
      /a role before any user/,
    );
  });

  it('reads the same records however the text is cut into chunks, a character split in two included', async () => {
    const text = Buffer.from(`${LINES.join('\n')}\n`);
    const whole: UserRecord[] = [];
    const cut: UserRecord[] = [];
    const collect = (into: UserRecord[]) => async (arrays: AsyncIterable<UserRecord[]>) => {
      for await (const records of arrays) into.push(...records);
    };
    await pipeline(Readable.from([text]), assembleRecords({ totpIssuer: 'x' }), collect(whole));
    // Three-byte chunks split rows and the two bytes of "ë" alike.
    const chunks = Array.from({ length: Math.ceil(text.length / 3) }, (_, i) =>
      text.subarray(i * 3, i * 3 + 3),
    );
    await pipeline(Readable.from(chunks), assembleRecords({ totpIssuer: 'x' }), collect(cut));
    expect(whole.map((r) => r.sub)).to.deep.equal(['u-1', 'u-2']);
    expect(cut).to.deep.equal(whole);
  });

  it('leaves out the lists and custom attributes that the file does not read, and keeps those it does', () => {
    const email = 'a@example.com';
    const lines = [
      user('u-1', { email }, { tier: 'gold' }),
      row(1, 'login_id', 'email', email, 'email', email, email, ...nulls(6), '{}'),
      row(4, 'secondary', 'oob_otp_email', null, email, ...nulls(3)),
      row(4, 'primary', 'password', '$2a$10$abcdefghijklmnopqrstuv', ...nulls(4)),
    ];
    const assemble = (members?: ReadonlySet<string>) => {
      const assembler = new RecordAssembler({ totpIssuer: 'x', ...(members ? { members } : {}) });
      for (const line of lines) assembler.add(line);
      return assembler.end() as UserRecord;
    };
    const whole = assemble();
    expect(whole).to.include.keys('identities', 'mfa', 'password', 'custom_attributes');
    const narrow = assemble(new Set(['sub', 'email', 'roles']));
    expect(narrow).to.not.have.any.keys('identities', 'mfa', 'password', 'custom_attributes');
    expect(narrow).to.deep.include({ sub: 'u-1', email, roles: [] });
    const read = assemble(new Set(['identities', 'mfa', 'password', 'custom_attributes']));
    for (const name of ['identities', 'mfa', 'password', 'custom_attributes'])
      expect(read[name], name).to.deep.equal(whole[name]);
  });

  it("writes the statement's times (UTC, ISO style) in RFC 3339 with microseconds, as to_char does", () => {
    const cases: [string | null, string | null][] = [
      ['2026-01-02 03:04:05.123456+00', '2026-01-02T03:04:05.123456Z'],
      ['2026-01-02 03:04:05+00', '2026-01-02T03:04:05.000000Z'],
      ['2026-01-02 03:04:05.1+00', '2026-01-02T03:04:05.100000Z'],
      ['0099-01-02 03:04:05.5+00', '0099-01-02T03:04:05.500000Z'],
      ['12345-01-02 03:04:05.000001+00', '12345-01-02T03:04:05.000001Z'],
      ['0044-03-15 12:00:00.123+00 BC', '0044-03-15T12:00:00.123000Z'],
      ['infinity', null],
      ['-infinity', null],
      [null, null],
    ];
    for (const [text, time] of cases) expect(rfc3339Time(text), String(text)).to.equal(time);
    expect(() => rfc3339Time('2026-01-02 03:04:05+02')).to.throw(/unexpected records row: a time/);
  });
});
