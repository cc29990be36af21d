import { expect } from 'chai';
import { envelope, toApiError } from '../../../api/errors.js';
import { ApiError } from '../../../pipeline/errors.js';

describe('api/errors', () => {
  it('writes the envelope of docs/decisions.md, omitting empty info', () => {
    expect(envelope(new ApiError('RateLimited', 'slow down', { bucket_name: 'UserExport' }))).to.deep.equal({
      error: {
        name: 'TooManyRequest',
        reason: 'RateLimited',
        message: 'slow down',
        code: 429,
        info: { bucket_name: 'UserExport' },
      },
    });
    expect(envelope(new ApiError('TaskNotFound', 'no such task', {}))).to.deep.equal({
      error: { name: 'NotFound', reason: 'TaskNotFound', message: 'no such task', code: 404 },
    });
  });

  it('maps body-parser errors by their status, never by their text', () => {
    expect(toApiError(Object.assign(new Error('too big'), { status: 413, expose: true })).name).to.equal(
      'RequestEntityTooLarge',
    );
    const json = toApiError(Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400 }));
    expect([json.name, json.reason, json.message]).to.deep.equal([
      'Invalid',
      'BadRequest',
      'request body is not valid JSON',
    ]);
  });

  it('hides the message of an unexpected error', () => {
    const err = toApiError(new Error('connect ECONNREFUSED 127.0.0.1:5432 password=hunter2'));
    expect([err.name, err.reason, err.message]).to.deep.equal([
      'InternalError',
      'UnexpectedError',
      'unexpected error',
    ]);
  });
});
