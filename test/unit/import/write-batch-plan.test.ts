import { expect } from 'chai';
import { microsecondTime } from '../../../pipeline/import/write-batch-plan.js';

describe('microsecondTime', () => {
  it('writes microseconds since the epoch as an RFC 3339 time in UTC, to the microsecond', () => {
    expect(microsecondTime(1_700_000_000_123_456)).to.equal('2023-11-14T22:13:20.123456Z');
    expect(microsecondTime(1_700_000_000_000_007)).to.equal('2023-11-14T22:13:20.000007Z');
    expect(microsecondTime(5)).to.equal('1970-01-01T00:00:00.000005Z');
    expect(microsecondTime(1_764_000_000_999_999)).to.equal('2025-11-24T16:00:00.999999Z');
  });
});
