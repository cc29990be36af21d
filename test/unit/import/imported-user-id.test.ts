import { expect } from 'chai';
import { importedUserIds } from '../../../pipeline/import/imported-user-id.js';

describe('import/imported-user-id', () => {
  it('names the same user id for a record of one request, whatever task runs it again', () => {
    const first = importedUserIds('userimport_AAAA');
    const again = importedUserIds('userimport_AAAA');
    const other = importedUserIds('userimport_BBBB');
    expect(first(0)).to.equal(again(0));
    expect(first(0)).not.to.equal(first(1));
    expect(first(0)).not.to.equal(other(0));
  });

  it('is a UUID of version 8 and RFC 9562 variant, the index in its last six bytes', () => {
    const id = importedUserIds('userimport_AAAA')(255);
    expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-0000000000ff$/);
  });
});
