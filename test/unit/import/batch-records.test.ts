import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { importMessage } from '../../../pipeline/bus/task-message.js';
import { batchRecords } from '../../../pipeline/import/batch-records.js';
import type { IndexedRecord } from '../../../pipeline/import/parse-records.js';
import { recordStages } from '../../../pipeline/import/parse-records.js';
import { TEST_SECRETS } from '../../support/admin-api.js';
import {
  expectStopsWhenReaderLeaves,
  outputBeforeSourceError,
  stageOutput,
} from '../../support/stage-streams.js';

const records = (n: number): IndexedRecord[] =>
  Array.from({ length: n }, (_, index) => ({ index, raw: { n: index } }));

async function collect(
  source: Readable,
  stage: NodeJS.ReadWriteStream,
  slowMs = 0,
): Promise<IndexedRecord[][]> {
  const out: IndexedRecord[][] = [];
  await pipeline(
    source,
    stage,
    new Writable({
      objectMode: true,
      highWaterMark: 1,
      write(batch: IndexedRecord[], _enc, done) {
        out.push(batch);
        if (slowMs) sleep(slowMs).then(() => done());
        else done();
      },
    }),
  );
  return out;
}

describe('import/batch-records', () => {
  it('groups records into batches of the size, the last one shorter', async () => {
    const batches = await collect(Readable.from(records(7)), batchRecords(3, 0));
    expect(batches.map((b) => b.map((r) => r.index))).to.deep.equal([[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('drops the records an earlier attempt applied', async () => {
    const batches = await collect(Readable.from(records(7)), batchRecords(3, 5));
    expect(batches.map((b) => b.map((r) => r.index))).to.deep.equal([[5, 6]]);
  });

  it('keeps every record in order behind a slow reader', async () => {
    const batches = (await stageOutput(batchRecords(4, 0), records(50), 2)) as IndexedRecord[][];
    expect(batches.flat().map((r) => r.index)).to.deep.equal(records(50).map((r) => r.index));
  });

  it('stops reading its source when its reader leaves', async () => {
    await expectStopsWhenReaderLeaves(batchRecords(3, 0), (index) => ({ index, raw: {} }), 3);
  });

  it('passes on an error of its source, and never writes the batch the error cut short', async () => {
    const { written } = await outputBeforeSourceError(batchRecords(3, 0), records(7));
    expect((written as IndexedRecord[][]).map((b) => b.map((r) => r.index))).to.deep.equal([
      [0, 1, 2],
      [3, 4, 5],
    ]);
  });
});

describe('import/parse-records', () => {
  const read = async (message: string) => {
    const out: unknown[] = [];
    const [source, parse] = recordStages(message, TEST_SECRETS);
    for await (const r of source.pipe(parse)) out.push(r);
    return out;
  };

  it('streams the records of a message, a line each, with their positions', async () => {
    const message = importMessage('userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {
      project_id: 'default',
      request: { identifier: 'email', upsert: true, records: [{ email: 'a@x.co' }, 'odd', [1]] },
    });
    expect(message.split('\n'), 'the request, then a line per record').to.have.length(4);
    expect(await read(message)).to.deep.equal([
      { index: 0, raw: { email: 'a@x.co' } },
      { index: 1, raw: 'odd' },
      { index: 2, raw: [1] },
    ]);
  });

  it('fails on a record line that is not JSON', async () => {
    const message = `${JSON.stringify({ request: { identifier: 'email' } })}\n{"email":"a@x.co"}\n{"email":`;
    let caught: unknown;
    await read(message).catch((err) => {
      caught = err;
    });
    expect(caught).to.be.instanceOf(SyntaxError);
  });

  it('reads no record out of the first line, whatever it holds', async () => {
    const input = JSON.stringify({
      task_id: 'userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      kind: 'import',
      request: { upsert: true, identifier: 'email', records: [{ email: 'a@x.co' }] },
    });
    expect(await read(`${input}\n{"email":"b@x.co"}`)).to.deep.equal([
      { index: 0, raw: { email: 'b@x.co' } },
    ]);
  });

  it('fails on a truncated request', async () => {
    let caught: unknown;
    await pipeline([
      ...recordStages('{"request":{"identifier":"email","records":[{"email":', TEST_SECRETS),
      new Writable({ objectMode: true, write: (_r, _e, done) => done() }),
    ]).catch((err) => {
      caught = err;
    });
    expect(caught).to.be.instanceOf(Error);
  });
});
