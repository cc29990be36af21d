import { expect } from 'chai';
import {
  normalizeEmail,
  normalizeLoginId,
  normalizePhone,
  normalizeUsername,
} from '../../../pipeline/identity/normalize.js';

describe('identity/normalize', () => {
  it('email: trims, applies NFKC and case-folds', () => {
    expect(normalizeEmail('  Foo.Bar@Example.COM ', false)).to.deep.equal({
      ok: true,
      value: 'foo.bar@example.com',
    });
    // Fullwidth letters become ASCII under NFKC.
    expect(normalizeEmail('ＦＯＯ@example.com', false)).to.deep.equal({ ok: true, value: 'foo@example.com' });
  });

  it('email: keeps the case when case-sensitive', () => {
    expect(normalizeEmail('Foo@Example.com', true)).to.deep.equal({ ok: true, value: 'Foo@Example.com' });
  });

  it('email: refuses a display name, a missing domain and an empty value', () => {
    for (const bad of ['Foo <foo@example.com>', 'foo', 'foo@', '@example.com', '', 'a b@example.com']) {
      expect(normalizeEmail(bad, false).ok, bad).to.equal(false);
    }
  });

  it('username: trims, NFKC, case-folds unless case-sensitive; never empty', () => {
    expect(normalizeUsername(' JohnDoe ', false)).to.deep.equal({ ok: true, value: 'johndoe' });
    expect(normalizeUsername('JohnDoe', true)).to.deep.equal({ ok: true, value: 'JohnDoe' });
    expect(normalizeUsername('   ', false)).to.deep.equal({
      ok: false,
      problem: 'username must not be empty',
    });
  });

  it('phone: accepts only valid numbers already in E.164', () => {
    expect(normalizePhone('+85298765432')).to.deep.equal({ ok: true, value: '+85298765432' });
    for (const bad of ['85298765432', '+852 9876 5432', '+1234', '+10000000000', '', '+852-98765432']) {
      expect(normalizePhone(bad).ok, bad).to.equal(false);
    }
  });

  it('dispatches by login id key', () => {
    expect(normalizeLoginId('email', 'A@B.co', false)).to.deep.equal({ ok: true, value: 'a@b.co' });
    expect(normalizeLoginId('username', 'AB', false)).to.deep.equal({ ok: true, value: 'ab' });
    expect(normalizeLoginId('phone', '+14155552671', false)).to.deep.equal({
      ok: true,
      value: '+14155552671',
    });
  });
});
