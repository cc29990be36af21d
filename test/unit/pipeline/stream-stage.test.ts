import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { EngineError } from '../../../pipeline/errors.js';
import { CopyRecords } from '../../../pipeline/export/assemble-records.js';
import { ndjsonText } from '../../../pipeline/export/encode-ndjson.js';
import { encodeRecords } from '../../../pipeline/export/encode-records.js';
import { prepareRecord } from '../../../pipeline/import/validate-record.js';
import { streamStage } from '../../../pipeline/stream-stage.js';
import { stageOutput } from '../../support/stage-streams.js';

/** Runs `stage` over `input`; resolves with what the pipeline rejected with (undefined: nothing). */
async function failureOf(stage: ReturnType<typeof streamStage>, input: unknown[]): Promise<unknown> {
  return pipeline(
    Readable.from(input, { objectMode: true }),
    stage,
    new Writable({ objectMode: true, write: (_item, _enc, done) => done() }),
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('stream-stage: a throw in a stage fails its pipeline, never the process', () => {
  it('passes on what each call returns, nothing for undefined, and what the end returns', async () => {
    const stage = streamStage<number, number | string>(
      { objectMode: true },
      (n: number) => (n % 2 === 0 ? n * 10 : undefined),
      () => 'end',
    );
    expect(await stageOutput(stage, [1, 2, 3, 4])).to.deep.equal([20, 40, 'end']);
  });

  it('turns a throw of the per-chunk function or of the end into a StageFault of its pipeline', async () => {
    const each = await failureOf(
      streamStage({ objectMode: true }, (n: number) => {
        if (n === 2) throw new RangeError('Invalid time value');
        return n;
      }),
      [1, 2, 3],
    );
    expect(each).to.be.instanceOf(EngineError).and.to.include({ code: 'StageFault' });
    expect((each as Error).message).to.equal('a pipeline stage failed (RangeError)');
    expect((each as Error).cause).to.be.instanceOf(RangeError);
    const end = await failureOf(
      streamStage(
        { objectMode: true },
        (n: number) => n,
        () => {
          throw 'not an error';
        },
      ),
      [1],
    );
    expect(end).to.be.instanceOf(EngineError).and.to.include({ code: 'StageFault' });
  });

  it("keeps a stage's own coded error as it is", async () => {
    const own = new EngineError('SealedSecretMissing', 'an import record names a secret its message lacks');
    const failed = await failureOf(
      streamStage({ objectMode: true }, () => {
        throw own;
      }),
      [1],
    );
    expect(failed).to.equal(own);
  });

  it('holds for the real stages: a user row that cannot be read fails the export, not the process', async () => {
    // Attributes that are not JSON: the parser throws a SyntaxError when the next user's row
    // completes the record.
    const row = Buffer.from('0\tu1\tfalse\t{not json\t{}\t\\N\t\\N\t\\N\t\\N\t\\N\n');
    const encoded = await failureOf(
      encodeRecords(new CopyRecords({ totpIssuer: 'x' }), ndjsonText(), () => {}),
      [row, row],
    );
    expect(encoded).to.include({ code: 'StageFault' });
  });
});

describe('import/validate-record: a check that throws fails its record alone', () => {
  it('answers ValidationFailed for that record, as one the service cannot read', () => {
    const checked = prepareRecord({ index: 3, raw: { email: 'a@x.test' } }, () => {
      throw new RangeError('Invalid time value');
    });
    expect(checked.index).to.equal(3);
    expect(checked.checked.ok).to.equal(false);
    if (!checked.checked.ok) {
      expect(checked.checked.error.reason).to.equal('ValidationFailed');
      expect(checked.checked.error.info?.causes).to.deep.equal([
        { location: '', kind: 'unreadable', details: { message: 'the record could not be read' } },
      ]);
    }
  });
});
