import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { CopyRecords, RecordAssembler, type UserRecord } from '../../../pipeline/export/assemble-records.js';
import { csvText } from '../../../pipeline/export/encode-csv.js';
import { ndjsonText } from '../../../pipeline/export/encode-ndjson.js';
import { type BatchText, encodeRecords } from '../../../pipeline/export/encode-records.js';
import { exportFields } from '../../../pipeline/export/pointers.js';
import { CSV_RECORDS_AT_ONCE } from '../../../pipeline/export/stage-marks.js';

// Two thousand users' own rows of the records statement, in one chunk.
const LINES = Array.from(
  { length: 2_000 },
  (_, n) => `0\tu-${n}\tfalse\t{"name": "Zoë ${n}"}\t{}\t\\N\t\\N\t\\N\t\\N\t\\N`,
);
const CHUNK = Buffer.from(`${LINES.join('\n')}\n`);

/** The file's text when every record is encoded in one batch. */
function inOneBatch(text: BatchText<UserRecord>): string {
  const assembler = new RecordAssembler({ totpIssuer: 'x' });
  const records = [...LINES.map((l) => assembler.add(l)), assembler.end()];
  return text.encode(records.filter((r): r is UserRecord => r !== undefined)) + text.end();
}

/** The file's text as encodeRecords writes it, and the progress it told after each batch. */
async function encoded(text: BatchText<UserRecord>): Promise<{ written: string; told: number[] }> {
  const told: number[] = [];
  let written = '';
  await pipeline(
    Readable.from([CHUNK]),
    encodeRecords(new CopyRecords({ totpIssuer: 'x' }), text, (n) => told.push(n)),
    new Writable({
      write(out: Buffer, _enc, done) {
        written += out.toString();
        done();
      },
    }),
  );
  return { written, told };
}

describe('export: records encoded in batches of their format', () => {
  it("writes a CSV chunk's records CSV_RECORDS_AT_ONCE at a time, the same text as in one batch", async () => {
    const fields = exportFields(undefined, []);
    const { written, told } = await encoded(csvText(fields, {}));
    expect(written).to.equal(inOneBatch(csvText(fields, {})));
    // The chunk completes every record but the last, which the end of the text completes.
    const completed = LINES.length - 1;
    const batches = Array.from({ length: Math.ceil(completed / CSV_RECORDS_AT_ONCE) }, (_, n) =>
      Math.min((n + 1) * CSV_RECORDS_AT_ONCE, completed),
    );
    expect(told).to.deep.equal([...batches, LINES.length]);
  });

  it("writes an ndjson chunk's records in one batch", async () => {
    const { written, told } = await encoded(ndjsonText());
    expect(written).to.equal(inOneBatch(ndjsonText()));
    expect(told).to.deep.equal([LINES.length - 1, LINES.length]);
  });
});
