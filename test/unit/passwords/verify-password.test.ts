import { expect } from 'chai';
import { isLegacyPassword, verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { passwordTypes } from '../../../schemas/index.js';
import {
  PASSWORD_COST_LIMITS,
  type PasswordInput,
  PHC_IDS,
  passwordTypeOf,
  storedPasswordHash,
} from '../../../schemas/password-formats.js';
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

  describe('cost bounds (PASSWORD_COST_LIMITS)', () => {
    const SALT_AND_HASH = 'CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';
    const B64 = 'c29tZXNhbHRzb21lc2FsdA'; // 16 bytes, unpadded as PHC writes it
    const { bcryptCost, argon2Passes, parallelism, pbkdf2Rounds } = PASSWORD_COST_LIMITS;
    const memoryKiB = PASSWORD_COST_LIMITS.memoryBytes / 1024;
    const cases: [string, PasswordInput, PasswordInput, string][] = [
      [
        'bcrypt cost',
        { type: 'bcrypt', password_hash: `$2b$${bcryptCost}$${SALT_AND_HASH}` },
        { type: 'bcrypt', password_hash: `$2b$31$${SALT_AND_HASH}` },
        'cost 31 is above the limit of 14',
      ],
      [
        'argon2 memory',
        { type: 'argon2id', password_hash: `$argon2id$v=19$m=${memoryKiB},t=2,p=1$${B64}$${B64}` },
        { type: 'argon2id', password_hash: `$argon2id$v=19$m=4194304,t=2,p=1$${B64}$${B64}` },
        'memory (bytes) 4294967296 is above the limit of 268435456',
      ],
      [
        'argon2 passes',
        { type: 'argon2i', password_hash: `$argon2i$v=19$m=65536,t=${argon2Passes},p=1$${B64}$${B64}` },
        { type: 'argon2i', password_hash: `$argon2i$v=19$m=65536,t=64,p=1$${B64}$${B64}` },
        'passes (t) 64 is above the limit of 10',
      ],
      [
        'scrypt memory',
        { type: 'scrypt', password_hash: `$scrypt$ln=18,r=8,p=${parallelism}$${B64}$${B64}` },
        { type: 'scrypt', password_hash: `$scrypt$ln=24,r=64,p=64$${B64}$${B64}` },
        'memory (bytes) 137438953472 is above the limit of 268435456',
      ],
      [
        'pbkdf2 rounds',
        { type: 'pbkdf2_sha256', password_hash: `$pbkdf2-sha256$i=${pbkdf2Rounds}$${B64}$${B64}` },
        { type: 'pbkdf2_sha512', password_hash: `$pbkdf2-sha512$i=10000000$${B64}$${B64}` },
        'rounds 10000000 is above the limit of 2000000',
      ],
    ];
    for (const [bound, atLimit, above, problem] of cases) {
      it(`${bound}: a hash at the limit is stored, one above fails naming the bound and verifies nothing`, async () => {
        expect(storedPasswordHash(atLimit, undefined)).to.deep.include({ ok: true });
        const refused = storedPasswordHash(above, undefined);
        expect(refused).to.deep.include({ ok: false, kind: 'maximum' });
        if (!refused.ok) expect(refused.problem).to.equal(`${above.type} hash: ${problem}`);
        // Stored by other means, it is refused before any work: cost 31 would take days.
        expect(await verifyPassword(above.password_hash, 'x')).to.equal(false);
      });
    }
  });

  it('verifies nothing against a stored string of no known format', async () => {
    expect(await verifyPassword('plain-text', 'plain-text')).to.equal(false);
    expect(await verifyPassword('$unknown$abc$def', 'x')).to.equal(false);
  });
});
