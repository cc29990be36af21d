import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ConfigError } from '../../../pipeline/errors.js';
import { secretBox } from '../../../pipeline/tasks/task-secrets.js';

describe('tasks/task-secrets (AES-256-GCM)', () => {
  it('seals any JSON value so that only a box with the key opens it', () => {
    const key = randomBytes(32);
    const box = secretBox(key);
    for (const value of ['$2b$10$aLongEnoughHashValue', { secret: 'JBSWY3DPEHPK3PXP' }, 42, null]) {
      const sealed = box.seal(value);
      expect(sealed).to.match(/^v1\.[0-9a-f]{16}\./);
      expect(box.open(sealed)).to.deep.equal(value);
    }
    const sealed = box.seal({ secret: 'JBSWY3DPEHPK3PXP' });
    expect(sealed).not.to.include('JBSWY3DPEHPK3PXP');
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString('latin1')).not.to.include(
      'JBSWY3DP',
    );
    expect(box.seal('x')).not.to.equal(box.seal('x')); // a fresh IV each time
    expect(() => secretBox(randomBytes(32)).open(box.seal('x'))).to.throw(/unknown format or key/);
  });

  it('opens what a previous key sealed after a rotation, and refuses a tampered value', () => {
    const old = randomBytes(32);
    const sealed = secretBox(old).seal('secret');
    const rotated = secretBox(randomBytes(32), [old]);
    expect(rotated.open(sealed)).to.equal('secret');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => rotated.open(parts.join('.'))).to.throw();
    expect(() => secretBox(randomBytes(16))).to.throw(ConfigError);
  });

  it('seals bytes (a file frame) that only a box with its key, or a rotated one, opens untampered', () => {
    const old = randomBytes(32);
    const plain = Buffer.from('1\t{"email":"a@example.com","password":{"password_hash":"$2b$10$x"}}\n');
    const sealed = secretBox(old).sealBytes(plain);
    expect(sealed.toString('latin1')).not.to.include('a@example.com');
    expect(secretBox(randomBytes(32), [old]).openBytes(sealed)).to.deep.equal(plain);
    expect(() => secretBox(randomBytes(32)).openBytes(sealed)).to.throw(/unknown format or key/);
    const tampered = Buffer.from(sealed);
    tampered[30] = (tampered[30] ?? 0) ^ 1;
    expect(() => secretBox(old).openBytes(tampered)).to.throw();
  });
});
