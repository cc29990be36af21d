import { expect } from 'chai';
import {
  compilePointer,
  exportFields,
  nonUniqueFieldNames,
  pointerTokens,
  SPEC_POINTERS,
} from '../../../pipeline/export/pointers.js';

describe('export/pointers', () => {
  it('unescapes reference tokens (~1 is /, then ~0 is ~)', () => {
    expect(pointerTokens('/a~1b/c~0d/~01')).to.deep.equal(['a/b', 'c~d', '~1']);
  });

  it('derives field names by joining the unescaped tokens with dots', () => {
    expect(
      exportFields(
        [{ pointer: '/address/country' }, { pointer: '/x~1y', field_name: 'XY' }, { pointer: '/a~0b' }],
        [],
      ),
    ).to.deep.equal([
      { pointer: '/address/country', field_name: 'address.country' },
      { pointer: '/x~1y', field_name: 'XY' },
      { pointer: '/a~0b', field_name: 'a~b' },
    ]);
  });

  it('defaults to the spec table, then each custom attribute (escaped in the pointer)', () => {
    const fields = exportFields(undefined, ['member_id', 'a/b']);
    expect(fields.map((f) => f.pointer)).to.deep.equal([
      ...SPEC_POINTERS,
      '/custom_attributes/member_id',
      '/custom_attributes/a~1b',
    ]);
    expect(fields.at(-1)?.field_name).to.equal('custom_attributes.a/b');
    expect(SPEC_POINTERS).to.have.length(31);
  });

  it('reports every name, in order, when any repeats', () => {
    const fields = exportFields([{ pointer: '/a/b' }, { pointer: '/c', field_name: 'a.b' }], []);
    expect(nonUniqueFieldNames(fields)).to.deep.equal(['a.b', 'a.b']);
    expect(nonUniqueFieldNames(exportFields([{ pointer: '/a' }, { pointer: '/b' }], []))).to.equal(undefined);
  });

  it('resolves object members and array indexes, and nothing else', () => {
    const record = { identities: [{ login_id: { value: 'x' } }], 'a/b': 1, empty: null };
    expect(compilePointer('/identities/0/login_id/value')(record)).to.equal('x');
    expect(compilePointer('/a~1b')(record)).to.equal(1);
    expect(compilePointer('/empty')(record)).to.equal(null);
    const missing = [
      '/identities/1/type',
      '/identities/01',
      '/identities/-',
      '/nope',
      '/a~1b/deeper',
      '/toString',
      '/identities/length',
    ];
    for (const pointer of missing) expect(compilePointer(pointer)(record), pointer).to.equal(undefined);
  });
});
