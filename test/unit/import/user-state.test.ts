import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { v7 as uuidv7, validate, version } from 'uuid';
import { newRowId, v7Text } from '../../../pipeline/import/user-state.js';

describe('newRowId', () => {
  it('makes UUIDv7 ids that increase in the order they are made, many to a millisecond', () => {
    // 5,000 ids: many share a millisecond, and the pool of random bytes is refilled many times.
    const ids = Array.from({ length: 5_000 }, () => newRowId());
    for (const id of ids) expect(validate(id) && version(id), id).to.equal(7);
    const sorted = [...ids].sort();
    expect(sorted).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('draws fresh random bits for each id', () => {
    const tails = new Set(Array.from({ length: 1_000 }, () => newRowId().slice(-8)));
    expect(tails.size).to.be.greaterThan(990);
  });

  it('starts each millisecond at a random sequence, as the uuid package does', () => {
    const first = newRowId();
    const start = Date.now();
    while (Date.now() === start);
    const next = newRowId();
    expect(next > first).to.equal(true);
    // The 12 bits after the version digit are the top of the sequence: random, not counted up.
    const seqs = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const t = Date.now();
      while (Date.now() === t);
      seqs.add(newRowId().slice(15, 18));
    }
    expect(seqs.size).to.be.greaterThan(10);
  });

  it("writes the uuid package's v7 of the same time, sequence and random bytes", () => {
    const random = randomBytes(16 * 500);
    for (let n = 0; n < 500; n++) {
      // Times across the 48 bits (the top bytes too), sequences across the 32.
      const msecs = Math.floor(Math.random() * 2 ** 48);
      const seq = random.readInt32LE(n * 16);
      const offset = n * 16;
      const expected = uuidv7({ random: random.subarray(offset, offset + 16), msecs, seq });
      expect(v7Text(msecs, seq, random, offset), `${msecs} ${seq}`).to.equal(expected);
    }
  });
});
