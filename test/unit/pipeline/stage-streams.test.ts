import type { Duplex } from 'node:stream';
import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { CopyRecords } from '../../../pipeline/export/assemble-records.js';
import { csvText } from '../../../pipeline/export/encode-csv.js';
import { ndjsonText } from '../../../pipeline/export/encode-ndjson.js';
import { encodeRecords } from '../../../pipeline/export/encode-records.js';
import { batchRecords } from '../../../pipeline/import/batch-records.js';
import {
  markRepeatedIdentifiers,
  type PreparedRecord,
  prepareRecord,
  recordValidator,
  validateRecords,
} from '../../../pipeline/import/validate-record.js';
import {
  expectStopsWhenReaderLeaves,
  outputBeforeSourceError,
  stageOutput,
} from '../../support/stage-streams.js';

// Every stage of the import and export pipelines, as a stream: behind a slow reader it writes what
// a fast one gets; it stops pulling its source when the reader leaves; it passes a source error on
// and writes nothing it had not finished before it.

const project = configFromDocument({ project: {} }).project;
const validate = recordValidator('email', project);
const raw = (n: number) => ({ index: n, raw: { email: `user${n % 7}@example.com` } });
const prepared = (n: number): PreparedRecord => prepareRecord(raw(n), validate);
/** The records statement's COPY text of user n: its own row, with an email. */
const userRows = (n: number) =>
  Buffer.from(`0\tu${n}\tfalse\t{"email":"u${n}@example.com"}\t{}\t\\N\t\\N\t\\N\t\\N\t\\N\n`);
const recordsStage = (text: () => ReturnType<typeof ndjsonText>) => () =>
  encodeRecords(new CopyRecords({ totpIssuer: 'x' }), text(), () => {});

interface StageCase {
  readonly name: string;
  readonly make: () => Duplex;
  readonly item: (n: number) => unknown;
  /** Source items in one unit of the stage's readable side (a batch; items per encoded byte). */
  readonly itemsPerOutput?: number;
  /** What the stage writes for items 0..n-1 when its source then fails (a prefix of a full run). */
  readonly beforeError: (written: unknown[], whole: unknown[]) => void;
}

const asText = (chunks: unknown[]) =>
  chunks.map((c) => (Buffer.isBuffer(c) ? c.toString() : String(c))).join('');
const withoutLastLine = (text: string) => `${text.split('\n').slice(0, -2).join('\n')}\n`;

const STAGES: readonly StageCase[] = [
  {
    name: 'import/batch-records',
    make: () => batchRecords(3, 0),
    item: raw,
    itemsPerOutput: 3,
    beforeError: (written) => expect(written.flat()).to.have.length(9), // three whole batches of ten
  },
  {
    name: 'import/validate-record: validateRecords',
    make: () => validateRecords(validate),
    item: raw,
    beforeError: (written, whole) => expect(written).to.deep.equal(whole),
  },
  {
    name: 'import/validate-record: markRepeatedIdentifiers',
    make: () => markRepeatedIdentifiers('email'),
    item: prepared,
    beforeError: (written, whole) => {
      expect(written).to.deep.equal(whole);
      expect((written as PreparedRecord[]).filter((r) => r.repeats !== undefined)).to.have.length(3);
    },
  },
  {
    name: 'export/encode-records: csv',
    make: recordsStage(() =>
      csvText(
        [
          { pointer: '/email', field_name: 'email' },
          { pointer: '/sub', field_name: 'sub' },
        ],
        {},
      ),
    ),
    item: userRows,
    itemsPerOutput: 1 / 18, // each row is 18 bytes or more
    // The header and every user before the failure but the last, which only the next user's row
    // (or the end) completes; never the header a second time.
    beforeError: (written, whole) => expect(asText(written)).to.equal(withoutLastLine(asText(whole))),
  },
  {
    name: 'export/encode-records: ndjson',
    make: recordsStage(ndjsonText),
    item: userRows,
    itemsPerOutput: 1 / 100, // each line is 100 bytes or more
    beforeError: (written, whole) => expect(asText(written)).to.equal(withoutLastLine(asText(whole))),
  },
];

for (const stage of STAGES) {
  describe(`${stage.name} as a stream`, () => {
    const items = Array.from({ length: 10 }, (_, n) => stage.item(n));

    it('writes behind a slow reader exactly what a fast reader gets', async () => {
      const fast = await stageOutput(stage.make(), items);
      expect(fast).to.not.deep.equal([]);
      expect(await stageOutput(stage.make(), items, 3)).to.deep.equal(fast);
    });

    it('stops reading its source when its reader leaves', async () => {
      await expectStopsWhenReaderLeaves(stage.make(), stage.item, stage.itemsPerOutput);
    });

    it('passes an error of its source on, with only what it finished before it', async () => {
      const whole = await stageOutput(stage.make(), items);
      const { written } = await outputBeforeSourceError(stage.make(), items);
      stage.beforeError(written, whole);
    });
  });
}
