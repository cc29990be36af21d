import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
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

  it('treats a password or totp that is not an object as a secret as a whole', () => {
    expect(redactRecord({ password: HASH, mfa: { totp: 'S', password: null } })).to.deep.equal({
      password: REDACTED,
      mfa: { totp: REDACTED, password: null },
    });
    expect(redactRecord('not a record')).to.equal('not a record');
    expect(redactRecord({ mfa: 'x' })).to.deep.equal({ mfa: 'x' });
  });

  it('seals each secret for storage and opens it back when the worker reads the records', async () => {
    const box = secretBox(randomBytes(32));
    const records = [
      {
        email: 'a@x.test',
        password: { type: 'bcrypt', password_hash: HASH },
        mfa: { totp: { secret: 'S' } },
      },
      { email: 'b@x.test', password: ['odd', 1] },
    ];
    const input = JSON.stringify({ request: { records: sealRecords(records, box) } });
    expect(input).not.to.include(HASH).and.not.to.include('"S"').and.not.to.include('odd');
    const [source, parse] = recordStages(input, box);
    const read: unknown[] = [];
    for await (const r of source.pipe(parse)) read.push((r as { raw: unknown }).raw);
    expect(read).to.deep.equal(records);
    expect(mapSecretMembers({ email: 'c@x.test' }, () => 'never called')).to.deep.equal({
      email: 'c@x.test',
    });
  });
});
