import { expect } from 'chai';
import { causeInWords, errorInWords } from '../../../console/reason-words.js';

describe('console: the API errors of a record in words', () => {
  it('names the field and what is wrong with it, then the reason', () => {
    const error = {
      reason: 'ValidationFailed',
      message: 'invalid import record',
      info: {
        causes: [
          { location: '/email', kind: 'format', details: { message: 'not an email address' } },
          { location: '', kind: 'required', details: { missingProperty: 'email' } },
          { location: '/custom_attributes/tier', kind: 'type', details: { message: 'must be a string' } },
          {
            location: '/identities/0/oauth',
            kind: 'additionalProperties',
            details: { additionalProperty: 'x' },
          },
        ],
      },
    };
    expect(errorInWords(error)).to.equal(
      'Email: not an email address; email is missing; custom attribute tier: must be a string; ' +
        'identity 1 oauth x is not a member a record has (ValidationFailed)',
    );
    expect(
      errorInWords({
        reason: 'DuplicatedIdentity',
        message: 'identity already exists',
        info: { login_id_key: 'email' },
      }),
    ).to.equal("The email is already another user's sign-in (DuplicatedIdentity)");
    expect(errorInWords({ reason: 'TaskExpired', message: 'the task ended its workers too often' })).to.equal(
      'The task ended its workers too often (TaskExpired)',
    );
  });

  it('names the column a member that no record has came from', () => {
    const cause = { location: '', kind: 'additionalProperties', details: { additionalProperty: 'Notes' } };
    expect(causeInWords(cause, (member) => (member === 'Notes' ? 'Notes' : undefined))).to.equal(
      'column "Notes" is mapped to "Notes", which is not a member of a record: map it to one, or leave it empty',
    );
    expect(causeInWords({ location: '/roles', kind: 'type', details: { type: 'array' } })).to.equal(
      'roles must be an array',
    );
  });
});
