import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { CopyRecords, RecordAssembler, type UserRecord } from '../../../pipeline/export/assemble-records.js';
import { ndjsonText } from '../../../pipeline/export/encode-ndjson.js';
import { encodeRecords } from '../../../pipeline/export/encode-records.js';
import { ASSEMBLY_SLICE_BYTES } from '../../../pipeline/export/stage-marks.js';

// A user's own row of the records statement, its name of a length that moves with n, so that the
// slices' edges fall on every kind of place: inside a row, between rows, inside the two bytes of ë.
const userRow = (n: number) =>
  `0\tu-${n}\tfalse\t{"name": "Zoë${'ë'.repeat(n % 7)} ${n}"}\t{}\t\\N\t\\N\t\\N\t\\N\t\\N`;

describe('export: records encoded a slice of their rows at a time', () => {
  it('writes every record of a chunk many slices long, in order, and tells progress slice by slice', async () => {
    const lines = Array.from({ length: 2_000 }, (_, n) => userRow(n));
    const chunk = Buffer.from(`${lines.join('\n')}\n`);
    expect(chunk.length).to.be.greaterThan(8 * ASSEMBLY_SLICE_BYTES);
    const assembler = new RecordAssembler({ totpIssuer: 'x' });
    const expected = [...lines.map((l) => assembler.add(l)), assembler.end()]
      .filter((r): r is UserRecord => r !== undefined)
      .map((r) => `${JSON.stringify(r)}\n`)
      .join('');

    const told: number[] = [];
    let written = '';
    await pipeline(
      Readable.from([chunk]),
      encodeRecords(new CopyRecords({ totpIssuer: 'x' }), ndjsonText(), (n) => told.push(n)),
      new Writable({
        write(out: Buffer, _enc, done) {
          written += out.toString();
          done();
        },
      }),
    );
    expect(written).to.equal(expected);
    expect(told.at(-1)).to.equal(lines.length);
    // One report per slice that completed a record: the chunk was not assembled whole.
    expect(told.length).to.be.at.least(Math.floor(chunk.length / ASSEMBLY_SLICE_BYTES));
  });
});
