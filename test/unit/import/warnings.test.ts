import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { insertWarnings, SKIP_WARNING, updateWarnings } from '../../../pipeline/import/warnings.js';

const project = configFromDocument({
  project: { custom_attributes: [{ name: 'tier', type: 'string' }] },
}).project;
const messages = (warnings: { message: string }[]) => warnings.map((w) => w.message);

describe('import/warnings (the exact texts of docs/decisions.md)', () => {
  it('names each value that has no effect on a new user', () => {
    expect(
      messages(
        insertWarnings(
          {
            email: null,
            phone_number: null,
            preferred_username: 'u',
            email_verified: false,
            phone_number_verified: true,
            disabled: false,
            mfa: { email: null, phone_number: null },
            custom_attributes: { tier: 'gold', shoe: 42 },
          },
          project,
        ),
      ),
    ).to.deep.equal([
      'email = null has no effect in insert.',
      'phone_number = null has no effect in insert.',
      'mfa.email = null has no effect in insert.',
      'mfa.phone_number = null has no effect in insert.',
      'email_verified = false has no effect in insert.',
      'phone_number_verified = true has no effect when phone_number is absent.',
      'disabled = false has no effect in insert.',
      'custom_attributes.shoe is not defined.',
    ]);
    expect(insertWarnings({ email: 'a@x.test', email_verified: true }, project)).to.deep.equal([]);
  });

  it('names the secrets an update ignores, and the skip', () => {
    expect(
      messages(
        updateWarnings(
          {
            email: 'a@x.test',
            password: { type: 'bcrypt', password_hash: 'h' },
            mfa: { password: { type: 'bcrypt', password_hash: 'h' }, totp: { secret: 's' } },
          },
          project,
        ),
      ),
    ).to.deep.equal([
      'password is ignored because the user exists already.',
      'mfa.password is ignored because the user exists already.',
      'mfa.totp is ignored because the user exists already.',
    ]);
    expect(SKIP_WARNING.message).to.equal('skipping because upsert = false and user exists');
  });
});
