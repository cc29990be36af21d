import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { importMessage } from '../../../pipeline/bus/task-message.js';
import { recordStages, sealRecords } from '../../../pipeline/import/parse-records.js';
import { mapSecretMembers, REDACTED, redactRecord } from '../../../pipeline/import/secret-members.js';
import { secretBox } from '../../../pipeline/tasks/task-secrets.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

describe('import/secret-members', () => {
  it('redacts password, mfa.password and mfa.totp secrets, valid or not, and leaves the rest', () => {
    const record = {
      email: 'a@x.test',
      password: { type: 'bcrypt', password_hash: HASH },
      mfa: { email: 'm@x.test', password: { password_hash: 7 }, totp: { secret: 'S' } },
    };
    expect(redactRecord(record)).to.deep.equal({
      email: 'a@x.test',
      password: { type: 'bcrypt', password_hash: REDACTED },
      mfa: { email: 'm@x.test', password: { password_hash: REDACTED }, totp: { secret: REDACTED } },
    });
    expect(record.password.password_hash, 'the record itself is untouched').to.equal(HASH);
  });

  it('redacts the secret and the otpauth uri that embeds it, in mfa.totp and each item of mfa.totps', () => {
    const uri = 'otpauth://totp/p:a?secret=JBSWY3DPEHPK3PXP';
    const record = { mfa: { totp: { secret: 'A', uri }, totps: [{ secret: 'A', uri }, { uri }, 'B', null] } };
    expect(redactRecord(record)).to.deep.equal({
      mfa: {
        totp: { secret: REDACTED, uri: REDACTED },
        totps: [{ secret: REDACTED, uri: REDACTED }, { uri: REDACTED }, REDACTED, null],
      },
    });
    expect(redactRecord({ mfa: { totps: { secret: 'C' } } })).to.deep.equal({
      mfa: { totps: { secret: REDACTED } },
    });
  });

  it('treats a password or totp that is not an object as a secret as a whole', () => {
    expect(redactRecord({ password: HASH, mfa: { totp: 'S', password: null } })).to.deep.equal({
      password: REDACTED,
      mfa: { totp: REDACTED, password: null },
    });
    expect(redactRecord('not a record')).to.equal('not a record');
    expect(redactRecord({ mfa: 'x' })).to.deep.equal({ mfa: 'x' });
  });

  it('treats every member of a secret holder but the public ones as a secret: a misspelled one is not kept in clear', () => {
    const record = {
      email: 'a@x.test',
      password: { type: 'bcrypt', passwordHash: HASH, salt: 'NaCl', expire_after: '2030-01-01T00:00:00Z' },
      mfa: { password: { hash: HASH }, totp: { key: 'JBSWY3DPEHPK3PXP' }, totps: [{ seed: 'KRSXG5A' }] },
    };
    expect(redactRecord(record)).to.deep.equal({
      email: 'a@x.test',
      password: {
        type: 'bcrypt',
        passwordHash: REDACTED,
        salt: 'NaCl',
        expire_after: '2030-01-01T00:00:00Z',
      },
      mfa: { password: { hash: REDACTED }, totp: { key: REDACTED }, totps: [{ seed: REDACTED }] },
    });
    const box = secretBox(randomBytes(32));
    const sealed = JSON.stringify(sealRecords([record], box));
    expect(sealed).not.to.include(HASH).and.not.to.include('JBSWY3DPEHPK3PXP').and.not.to.include('KRSXG5A');
  });

  /** The raw records the worker's stages read out of a message. */
  async function readRecords(message: string, box: ReturnType<typeof secretBox>): Promise<unknown[]> {
    const [source, parse] = recordStages(message, box);
    const read: unknown[] = [];
    for await (const r of source.pipe(parse)) read.push((r as { raw: unknown }).raw);
    return read;
  }

  it('seals the secrets of a request as one list and opens it back when the worker reads the records', async () => {
    const box = secretBox(randomBytes(32));
    const records = [
      {
        email: 'a@x.test',
        password: { type: 'bcrypt', password_hash: HASH },
        mfa: { totp: { secret: 'S', uri: 'otpauth://totp/p:a?secret=TOTPSECRET' } },
      },
      { email: 'b@x.test', password: ['odd', 1] },
      { email: 'c@x.test', password: { type: 'bcrypt', password_hash: 7 } },
    ];
    const sealed = sealRecords(records, box);
    expect(sealed.records[0]).to.deep.equal({
      email: 'a@x.test',
      password: { type: 'bcrypt', password_hash: 0 },
      mfa: { totp: { secret: 1, uri: 2 } },
    });
    const request = { identifier: 'email', upsert: false, ...sealed };
    const input = importMessage('t', { project_id: 'default', request });
    expect(input).not.to.include(HASH).and.not.to.include('"S"').and.not.to.include('odd');
    expect(input).not.to.include('TOTPSECRET');
    expect(await readRecords(input, box)).to.deep.equal(records);
    expect(mapSecretMembers({ email: 'c@x.test' }, () => 'never called')).to.deep.equal({
      email: 'c@x.test',
    });
  });

  it('reads a request without secrets as it is, and leaves a secret that is not a position alone', async () => {
    const box = secretBox(randomBytes(32));
    const plain = [{ email: 'first-string@x.test' }, { email: 'b@x.test', name: 'B' }];
    const none = sealRecords(plain, box);
    expect(none).to.deep.equal({ records: plain });
    const request = { identifier: 'email', upsert: false, ...none };
    expect(await readRecords(importMessage('t', { project_id: 'default', request }), box)).to.deep.equal(
      plain,
    );
    const odd = [{ email: 'o@x.test', password: { type: 'bcrypt', password_hash: 'not sealed' } }];
    const oddRequest = { identifier: 'email', upsert: false, records: odd };
    expect(
      await readRecords(importMessage('t', { project_id: 'default', request: oddRequest }), box),
    ).to.deep.equal(odd);
  });

  it('refuses a record that names a secret its message lacks', async () => {
    const box = secretBox(randomBytes(32));
    const request = { identifier: 'email', upsert: false, records: [{ password: { password_hash: 0 } }] };
    const message = importMessage('t', { project_id: 'default', request });
    let caught: unknown;
    await readRecords(message, box).catch((err) => {
      caught = err;
    });
    expect(String(caught)).to.include('names a secret its message lacks');
  });
});
