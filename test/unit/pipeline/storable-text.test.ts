import { expect } from 'chai';
import { isStorableText, storableJson, unstorableStrings } from '../../../pipeline/storable-text.js';

describe('storable-text', () => {
  it('refuses NUL and unpaired surrogates, and accepts pairs', () => {
    expect(isStorableText('plain ✓ 😀')).to.equal(true);
    for (const bad of ['a\u0000b', '\ud800', 'x\udc00', '\ud83d', '\ude00😀'])
      expect(isStorableText(bad), bad).to.equal(false);
  });

  it('names the pointer of every such string, object keys included', () => {
    expect(
      unstorableStrings({ a: 'ok', b: ['x', 'y\u0000'], 'k/\ud800': 1, c: { d: '\udfff' } }),
    ).to.deep.equal(['/b/1', '/k~1\ud800', '/c/d']);
  });

  it('writes JSON Postgres accepts, as it is when nothing is wrong', () => {
    expect(storableJson({ a: 'ok' })).to.equal('{"a":"ok"}');
    expect(JSON.parse(storableJson({ 'k\u0000': ['a\u0000b', '\ud800'] }))).to.deep.equal({
      'k\ufffd': ['a\ufffdb', '\ufffd'],
    });
  });
});
