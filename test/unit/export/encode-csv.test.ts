import { expect } from 'chai';
import { csvRows, plainDecimal } from '../../../pipeline/export/encode-csv.js';

/** The CSV text of `batches` of rows, each encoded as it comes, then the end. */
function csv(header: string[], batches: unknown[][][]): string {
  const rows = csvRows(header);
  return batches.map((batch) => rows.encode(batch)).join('') + rows.end();
}

describe('export/encode-csv', () => {
  it('encodes each value type as docs/decisions.md says', () => {
    const row = ['plain', true, false, 42, -1.5, null, undefined, [], {}, ['a', 1], { k: 'v' }, ''];
    expect(csv(['h'], [[row]])).to.equal(
      'h\nplain,true,false,42,-1.5,,,[],{},"[""a"",1]","{""k"":""v""}",\n',
    );
  });

  it('quotes delimiters, quotes, line feeds and carriage returns (RFC 4180)', () => {
    expect(csv(['a,b', 'c"d'], [[['x,y', 'say "hi"', 'l1\nl2', 'cr\rx', ' spaced ']]])).to.equal(
      '"a,b","c""d"\n"x,y","say ""hi""","l1\nl2","cr\rx", spaced \n',
    );
  });

  it('writes the header once, before the first batch, and alone when there are no rows', () => {
    expect(csv(['a'], [[['1']], [['2'], ['3']]])).to.equal('a\n1\n2\n3\n');
    expect(csv(['a', 'b'], [])).to.equal('a,b\n');
  });

  it('writes numbers in plain decimal, never with an exponent', () => {
    expect(plainDecimal(1e21)).to.equal('1000000000000000000000');
    expect(plainDecimal(1.5e-7)).to.equal('0.00000015');
    expect(plainDecimal(-2.5e22)).to.equal('-25000000000000000000000');
    expect(plainDecimal(123.456)).to.equal('123.456');
  });
});
