import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { recordValidator } from '../../../pipeline/import/validate-record.js';

const project = configFromDocument({
  project: {
    login_id_keys: [{ key: 'email' }, { key: 'phone' }],
    custom_attributes: [{ name: 'score', type: 'number' }],
  },
}).project;
const validate = recordValidator('email', project);

/** The failing locations and kinds of a record, or 'valid'. */
function problems(raw: unknown): [string, string][] | 'valid' {
  const checked = validate(raw);
  if (checked.ok) return 'valid';
  return ((checked.error.info?.causes ?? []) as { location: string; kind: string }[]).map((c) => [
    c.location,
    c.kind,
  ]);
}

describe('import/validate-record', () => {
  it('accepts a full valid record and normalizes its login ids', () => {
    const checked = validate({
      email: ' Ann@Example.COM ',
      phone_number: '+14155552671',
      custom_attributes: { score: 1.5 },
    });
    expect(checked.ok).to.equal(true);
    if (checked.ok) {
      expect(checked.valid.loginIds.get('email')).to.deep.equal({
        value: 'ann@example.com',
        original: ' Ann@Example.COM ',
      });
      expect(checked.valid.loginIds.get('phone')).to.deep.equal({
        value: '+14155552671',
        original: '+14155552671',
      });
    }
  });

  it('names the pointer of each string Postgres cannot store, with the schema problems beside them', () => {
    expect(problems({ email: 'a@x.test', name: 'a\u0000b', address: { locality: '\ud800' } })).to.deep.equal([
      ['/name', 'storableText'],
      ['/address/locality', 'storableText'],
    ]);
    expect(problems({ email: 'a@x.test', surprise: '\u0000' })).to.deep.equal([
      ['', 'additionalProperties'],
      ['/surprise', 'storableText'],
    ]);
  });

  it('refuses a TOTP secret that is not base32, which an otpauth URI could not carry as it is', () => {
    expect(problems({ email: 'a@x.test', mfa: { totp: { secret: 'JBSWY3DPEHPK3PXP' } } })).to.equal('valid');
    expect(problems({ email: 'a@x.test', mfa: { totp: { secret: 'X&issuer=Evil' } } })).to.deep.equal([
      ['/mfa/totp/secret', 'pattern'],
    ]);
    expect(problems({ email: 'a@x.test', mfa: { totps: [{ secret: 'ab c1' }] } })).to.deep.equal([
      ['/mfa/totps/0/secret', 'pattern'],
    ]);
  });

  it('refuses a login id that is malformed, of a key not enabled, or not E.164', () => {
    expect(problems({ email: 'not an email' })).to.deep.equal([['/email', 'format']]);
    expect(problems({ email: 'a@x.test', preferred_username: 'u' })).to.deep.equal([
      ['/preferred_username', 'loginID'],
    ]);
    expect(problems({ email: 'a@x.test', phone_number: '+1 415 555 2671' })).to.deep.equal([
      ['/phone_number', 'format'],
    ]);
    expect(problems({ email: 'a@x.test', custom_attributes: { score: 'high' } })).to.deep.equal([
      ['/custom_attributes/score', 'type'],
    ]);
    expect(
      problems({ email: 'a@x.test', password: { type: 'bcrypt', password_hash: 'nope' } })[0],
    ).to.deep.equal(['/password/password_hash', 'format']);
  });
});

describe('import/custom-attributes (ajv checks compiled from the declarations)', () => {
  const typed = configFromDocument({
    project: {
      custom_attributes: [
        { name: 's', type: 'string' },
        { name: 'n', type: 'number' },
        { name: 'i', type: 'integer' },
        { name: 'b', type: 'boolean' },
        { name: 'e', type: 'enum', enum: ['gold', 'silver'] },
        { name: 'm', type: 'email' },
        { name: 'p', type: 'phone_number' },
        { name: 'u', type: 'url' },
        { name: 'c', type: 'country_code' },
      ],
    },
  }).project;
  const check = recordValidator('email', typed);

  it('accepts a value of each declared type, and null (which deletes it)', () => {
    const good = {
      s: 'x',
      n: 1.5,
      i: 2,
      b: false,
      e: 'gold',
      m: 'a@x.test',
      p: '+14155552671',
      u: 'https://x.test',
      c: 'HK',
    };
    expect(check({ email: 'a@x.test', custom_attributes: good }).ok).to.equal(true);
    expect(check({ email: 'a@x.test', custom_attributes: { i: null } }).ok).to.equal(true);
  });

  it('names the attribute and the rule of each value that does not fit', () => {
    const bad = { s: 1, n: 'x', i: 1.5, b: 'yes', e: 'bronze', m: 'nope', p: '555', u: 'not a url', c: 'hk' };
    const checked = check({ email: 'a@x.test', custom_attributes: bad });
    expect(checked.ok).to.equal(false);
    if (checked.ok) return;
    const causes = checked.error.info?.causes as { location: string; details: { message: string } }[];
    expect(causes.map((c) => [c.location, c.details.message])).to.deep.equal([
      ['/custom_attributes/s', 'must be a string'],
      ['/custom_attributes/n', 'must be a number'],
      ['/custom_attributes/i', 'must be an integer'],
      ['/custom_attributes/b', 'must be a boolean'],
      ['/custom_attributes/e', 'must be one of gold, silver'],
      ['/custom_attributes/m', 'must be an email address'],
      ['/custom_attributes/p', 'must be a phone number in E.164 format'],
      ['/custom_attributes/u', 'must be a URL'],
      ['/custom_attributes/c', 'must be an ISO 3166-1 alpha-2 code'],
    ]);
  });
});

describe('import/validate-record: closed secret holders, convertible times', () => {
  it('refuses an unknown member of a password, mfa.password or mfa.totp, naming it', () => {
    const hash = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
    const checked = validate({
      email: 'a@x.test',
      password: { type: 'bcrypt', password_hash: hash, passwordHash: hash },
      mfa: {
        password: { type: 'bcrypt', password_hash: hash, hash },
        totp: { secret: 'JBSWY3DP', key: 'K' },
      },
    });
    expect(checked.ok).to.equal(false);
    const named = (
      (checked.ok ? [] : (checked.error.info?.causes ?? [])) as {
        location: string;
        details: { additionalProperty?: string };
      }[]
    ).map((c) => `${c.location}/${c.details.additionalProperty}`);
    expect(named).to.include.members(['/password/passwordHash', '/mfa/password/hash', '/mfa/totp/key']);
  });

  it('accepts exactly the times it can convert: a leap second or an hour-only offset fails the record, naming the member', () => {
    for (const time of ['2016-12-31T23:59:60Z', '2030-01-01T00:00:00+01', '0000-06-01T00:00:00Z']) {
      expect(problems({ email: 'a@x.test', account_valid_from: time }), time).to.deep.equal([
        ['/account_valid_from', 'format'],
      ]);
      expect(problems({ email: 'a@x.test', account_valid_until: time }), time).to.deep.equal([
        ['/account_valid_until', 'format'],
      ]);
      const password = {
        type: 'bcrypt',
        password_hash: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy',
      };
      expect(
        problems({ email: 'a@x.test', password: { ...password, expire_after: time } }),
        time,
      ).to.deep.equal([['/password/expire_after', 'format']]);
    }
    expect(problems({ email: 'a@x.test', account_valid_from: '2016-12-31T23:59:59+09:00' })).to.equal(
      'valid',
    );
  });
});
