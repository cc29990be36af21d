import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { expect } from 'chai';
import { BLOCK_BYTES, BlobStorage } from '../../../pipeline/blob/blob-storage.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';

// A file is cut into blocks as it streams: each chunk is copied into the block being filled, and
// a staged block's buffer is filled again. Whatever the chunks' sizes, the blob holds the stream's
// bytes in order, in blocks of the set size.

const HEADERS = { contentType: 'application/octet-stream', contentDisposition: 'attachment' };

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('blob uploads in blocks (Azurite)', () => {
  let blobs: BlobStorage;

  before(async () => {
    blobs = await BlobStorage.open({ connectionString: testBlobConnectionString() }, uniqueContainer());
  });

  it('stores every byte in order, from chunks of any size, across blocks used again', async () => {
    // Random bytes, so that a block overwritten before it was staged cannot go unseen; chunks that
    // straddle the blocks' edges, one longer than a block, and text among the bytes.
    const file = randomBytes(3 * BLOCK_BYTES + 12_345);
    const text = 'an ASCII line of text\n'.repeat(1000);
    const sizes = [1, 65_537, BLOCK_BYTES + 5, 999, 200_003];
    const chunks: (Buffer | string)[] = [];
    const expected: Buffer[] = [];
    for (let at = 0, n = 0; at < file.length; n++) {
      const chunk = file.subarray(at, at + (sizes[n % sizes.length] as number));
      at += chunk.length;
      chunks.push(chunk);
      expected.push(chunk);
      if (n % 7 === 3) {
        chunks.push(text);
        expected.push(Buffer.from(text));
      }
    }
    const whole = Buffer.concat(expected);

    const ids = await blobs.stageBlocks('in-blocks.bin', Readable.from(chunks), 'p0');
    await blobs.commitBlocks('in-blocks.bin', ids, HEADERS);

    // Blocks of BLOCK_BYTES, the last one shorter.
    expect(ids).to.have.length(Math.ceil(whole.length / BLOCK_BYTES));
    const stored = await buffer(await blobs.read('in-blocks.bin'));
    expect(stored.length).to.equal(whole.length);
    expect(sha256(stored)).to.equal(sha256(whole));
  });

  it('stages a stream shorter than one block as one block, and an empty stream as none', async () => {
    const small = randomBytes(1000);
    const ids = await blobs.stageBlocks('small.bin', Readable.from([small]), 'p0');
    await blobs.commitBlocks('small.bin', ids, HEADERS);
    expect(ids).to.have.length(1);
    expect(sha256(await buffer(await blobs.read('small.bin')))).to.equal(sha256(small));
    expect(await blobs.stageBlocks('empty.bin', Readable.from([]), 'p0')).to.deep.equal([]);
  });
});
