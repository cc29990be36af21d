import { expect } from 'chai';
import {
  chContains,
  chIdentifier,
  chInt,
  chString,
  chStrings,
} from '../../../pipeline/search/clickhouse-sql.js';

describe('ClickHouse literals (values bound on the client)', () => {
  it('quotes a string, escaping quotes, backslashes and control characters', () => {
    expect(chString('plain')).to.equal("'plain'");
    expect(chString("O'Brien")).to.equal("'O\\'Brien'");
    expect(chString('a\\b')).to.equal("'a\\\\b'");
    expect(chString("\\'")).to.equal("'\\\\\\''");
    expect(chString('line\nbreak\ttab\rret\0nul')).to.equal("'line\\nbreak\\ttab\\rret\\0nul'");
    expect(chString("x'); DROP TABLE users; --")).to.equal("'x\\'); DROP TABLE users; --'");
  });

  it('writes arrays of strings', () => {
    expect(chStrings([])).to.equal('[]');
    expect(chStrings(['a', "b'c"])).to.equal("['a', 'b\\'c']");
  });

  it('takes the wildcards of a contained text literally', () => {
    expect(chContains('50%_off')).to.equal("'%50\\\\%\\\\_off%'");
    expect(chContains('a\\b')).to.equal("'%a\\\\\\\\b%'");
  });

  it('refuses what is not an integer or an identifier', () => {
    expect(chInt(42)).to.equal('42');
    expect(chInt('-9223372036854775808')).to.equal('-9223372036854775808');
    expect(chInt(10n)).to.equal('10');
    for (const bad of ['1.5', '1 OR 1', '', '1e3', '0x10']) expect(() => chInt(bad), bad).to.throw(TypeError);
    expect(chIdentifier('users_search')).to.equal('users_search');
    for (const bad of ['a.b', 'x; DROP', '1abc', ''])
      expect(() => chIdentifier(bad), bad).to.throw(TypeError);
  });
});
