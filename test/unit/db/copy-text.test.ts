import { expect } from 'chai';
import { decodeCopyField, encodeCopyField, encodeCopyRow } from '../../../pipeline/db/copy-text.js';

describe('db/copy-text (COPY text format)', () => {
  it('writes NULL as \\N, objects as JSON, and escapes backslash, newline, carriage return and tab', () => {
    expect(encodeCopyField(null)).to.equal('\\N');
    expect(encodeCopyField(undefined)).to.equal('\\N');
    expect(encodeCopyField(42)).to.equal('42');
    expect(encodeCopyField(false)).to.equal('false');
    expect(encodeCopyField({ a: 'x\ty' })).to.equal('{"a":"x\\\\ty"}');
    expect(encodeCopyField('a\\b\nc\rd\te')).to.equal('a\\\\b\\nc\\rd\\te');
    expect(encodeCopyRow(['a', null, 1])).to.equal('a\t\\N\t1\n');
  });

  it('reads back what it writes, and the escapes Postgres itself writes', () => {
    for (const text of ['plain', 'a\\b', 'line\nbreak', 'tab\there', 'cr\rhere', '{"k":"v\\\\"}']) {
      expect(decodeCopyField(encodeCopyField(text))).to.equal(text);
    }
    expect(decodeCopyField('\\b\\f\\v')).to.equal('\b\f\v');
  });
});
