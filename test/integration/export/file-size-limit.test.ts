import { expect } from 'chai';
import { BLOCK_BYTES, BlobStorage, MAX_BLOCKS } from '../../../pipeline/blob/blob-storage.js';
import type { PartState } from '../../../pipeline/db/export-parts.js';
import { EngineError } from '../../../pipeline/errors.js';
import { projectedBlocks } from '../../../pipeline/export/split-export.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';

// One blob holds at most MAX_BLOCKS blocks: a file that would need more is refused as soon as it
// is known, never by Azure at the commit after all the work.

const MIB = 1024 * 1024;

/** A staged part of `users` users that wrote `bytes` bytes in blocks of BLOCK_BYTES. */
function staged(part: number, users: number, bytes: number): PartState {
  const blocks = Math.ceil(bytes / BLOCK_BYTES);
  return { part, processed: users, bytes, failure: null, block_ids: Array.from({ length: blocks }, String) };
}

const waiting = (part: number): PartState => ({
  part,
  processed: 0,
  bytes: null,
  failure: null,
  block_ids: null,
});

describe('export file size limit', () => {
  it('projects the whole file from the parts staged so far', () => {
    // 64 MiB for a million users; a hundred million to write in a hundred parts.
    const states = [staged(0, 1_000_000, 64 * MIB), waiting(1)];
    expect(projectedBlocks(states, { parts: 100, users: 100_000_000 })).to.equal(8 + 792 + 99);
    expect(projectedBlocks([waiting(0)], { parts: 100, users: 100_000_000 }), 'nothing staged yet').to.equal(
      0,
    );
    // 4 KiB a user: the whole file passes what one blob holds.
    const large = projectedBlocks([staged(0, 1_000_000, 4000 * MIB)], { parts: 100, users: 100_000_000 });
    expect(large).to.be.above(MAX_BLOCKS);
  });

  it('refuses a block list longer than one blob holds before sending it', async () => {
    const blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, uniqueContainer());
    const ids = Array.from({ length: MAX_BLOCKS + 1 }, (_, n) =>
      Buffer.from(String(n).padStart(8, '0')).toString('base64'),
    );
    const refused = await blobs
      .commitBlocks('too-large.ndjson', ids, {
        contentType: 'application/x-ndjson',
        contentDisposition: 'attachment',
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).to.be.instanceOf(EngineError);
    expect(refused).to.include({ code: 'ExportFileTooLarge' });
    expect((refused as Error).message).to.contain(`one blob holds ${MAX_BLOCKS} blocks`);
  });
});
