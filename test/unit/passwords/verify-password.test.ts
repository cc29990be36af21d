import { expect } from 'chai';
import { PHC_IDS, passwordTypeOf, storedPasswordHash } from '../../../pipeline/passwords/password-formats.js';
import { isLegacyPassword, verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { passwordTypes } from '../../../schemas/index.js';
import { FIREBASE_PARAMS, MALFORMED_PASSWORDS, PASSWORD_VECTORS } from '../../support/password-vectors.js';

describe('passwords/verify-password', () => {
  it('has a published vector and a malformed hash of every format', () => {
    expect(new Set(PASSWORD_VECTORS.map((v) => v.input.type))).to.have.keys(...passwordTypes);
    expect(new Set(MALFORMED_PASSWORDS.map((p) => p.type))).to.have.keys(...passwordTypes);
    // The export's records statement names a stored hash's type by this rule.
    for (const [type, id] of Object.entries(PHC_IDS)) expect(id).to.equal(type.replaceAll('_', '-'));
  });

  for (const { name, input, plain } of PASSWORD_VECTORS) {
    it(`${name}: stored with its parameters, verified, a wrong password refused`, async () => {
      const stored = storedPasswordHash(input, FIREBASE_PARAMS);
      if (!stored.ok) expect.fail(stored.problem);
      expect(passwordTypeOf(stored.stored)).to.equal(input.type);
      expect(await verifyPassword(stored.stored, plain)).to.equal(true);
      expect(await verifyPassword(stored.stored, `${plain}!`)).to.equal(false);
      expect(await verifyPassword(stored.stored, '')).to.equal(false);
      // The stored form is accepted again as it is (an export fed back to the import).
      const again = storedPasswordHash({ type: input.type, password_hash: stored.stored }, undefined);
      expect(again).to.deep.equal({ ok: true, stored: stored.stored });
      expect(isLegacyPassword(stored.stored)).to.equal(input.type === 'md5_salted');
    });
  }

  for (const input of MALFORMED_PASSWORDS) {
    it(`refuses a malformed ${input.type} hash with a problem that names the format`, () => {
      const result = storedPasswordHash(input, FIREBASE_PARAMS);
      expect(result.ok).to.equal(false);
      if (!result.ok) expect(result.problem).to.include(`not a valid ${input.type} hash`);
    });
  }

  it('needs the project parameters for a Firebase hash given with its salt', () => {
    const firebase = PASSWORD_VECTORS.find((v) => v.input.type === 'firebase_scrypt');
    const result = storedPasswordHash(
      firebase?.input ?? { type: 'firebase_scrypt', password_hash: '' },
      undefined,
    );
    expect(result).to.deep.include({ ok: false });
    if (!result.ok) expect(result.problem).to.include('firebase_scrypt parameters');
  });

  it('refuses members that do not belong to the format', () => {
    const salted = storedPasswordHash(
      {
        type: 'bcrypt',
        password_hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW',
        salt: 'x',
      },
      undefined,
    );
    expect(salted.ok).to.equal(false);
  });

  it('verifies nothing against a stored string of no known format', async () => {
    expect(await verifyPassword('plain-text', 'plain-text')).to.equal(false);
    expect(await verifyPassword('$unknown$abc$def', 'x')).to.equal(false);
  });
});
