import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { expect } from 'chai';
import { encodeCsv, plainDecimal } from '../../../pipeline/export/encode-csv.js';

async function csv(header: string[], batches: unknown[][][]): Promise<string> {
  return text(Readable.from(batches, { objectMode: true }).pipe(encodeCsv(header)));
}

describe('export/encode-csv', () => {
  it('encodes each value type as docs/decisions.md says', async () => {
    const row = ['plain', true, false, 42, -1.5, null, undefined, [], {}, ['a', 1], { k: 'v' }, ''];
    expect(await csv(['h'], [[row]])).to.equal(
      'h\nplain,true,false,42,-1.5,,,[],{},"[""a"",1]","{""k"":""v""}",\n',
    );
  });

  it('quotes delimiters, quotes, line feeds and carriage returns (RFC 4180)', async () => {
    expect(await csv(['a,b', 'c"d'], [[['x,y', 'say "hi"', 'l1\nl2', 'cr\rx', ' spaced ']]])).to.equal(
      '"a,b","c""d"\n"x,y","say ""hi""","l1\nl2","cr\rx", spaced \n',
    );
  });

  it('writes the header once, before the first batch, and alone when there are no rows', async () => {
    expect(await csv(['a'], [[['1']], [['2'], ['3']]])).to.equal('a\n1\n2\n3\n');
    expect(await csv(['a', 'b'], [])).to.equal('a,b\n');
  });

  it('writes numbers in plain decimal, never with an exponent', () => {
    expect(plainDecimal(1e21)).to.equal('1000000000000000000000');
    expect(plainDecimal(1.5e-7)).to.equal('0.00000015');
    expect(plainDecimal(-2.5e22)).to.equal('-25000000000000000000000');
    expect(plainDecimal(123.456)).to.equal('123.456');
  });
});
