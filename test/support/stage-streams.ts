import { type Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

// The three stream behaviours every pipeline stage must have, as node-postgres tests its cursor
// streams: it keeps every item behind a slow reader, it stops pulling from its source when the
// reader goes away, and it passes an error of its source on without writing what it held.

/** Everything `stage` writes for `input`, read by a reader that takes `slowMs` per item. */
export async function stageOutput(stage: Duplex, input: readonly unknown[], slowMs = 0): Promise<unknown[]> {
  const out: unknown[] = [];
  await pipeline(
    Readable.from(input, { objectMode: true }),
    stage,
    new Writable({
      objectMode: true,
      highWaterMark: 1,
      write(item: unknown, _enc, done) {
        out.push(item);
        if (slowMs > 0) sleep(slowMs).then(() => done());
        else done();
      },
    }),
  );
  return out;
}

/** Items `Readable.from` reads ahead of its consumer (its object-mode high-water mark). */
const SOURCE_AHEAD = 16;

/**
 * Feeds `stage` an endless source of `item(n)` and a reader that gives up after its first item:
 * the pipeline must reject and the source must be closed, having been read no further ahead than
 * the stage's own marks allow: its writable side full, its readable side full (`itemsPerOutput`
 * source items make one unit of it: a batch's size, or items per encoded byte), the item in hand.
 */
export async function expectStopsWhenReaderLeaves(
  stage: Duplex,
  item: (n: number) => unknown,
  itemsPerOutput = 1,
): Promise<void> {
  const held = stage.writableHighWaterMark + Math.ceil(stage.readableHighWaterMark * itemsPerOutput);
  const bound = SOURCE_AHEAD + held + Math.ceil(itemsPerOutput) + 1;
  let read = 0;
  let closed = false;
  async function* endless() {
    try {
      for (;;) yield item(read++);
    } finally {
      closed = true;
    }
  }
  const outcome = await pipeline(
    Readable.from(endless(), { objectMode: true }),
    stage,
    new Writable({
      objectMode: true,
      write(_item, _enc, done) {
        done(new Error('the reader left'));
      },
    }),
  ).then(
    () => 'resolved',
    (err: Error) => err.message,
  );
  expect(outcome).to.equal('the reader left');
  expect(closed, 'the source was closed').to.equal(true);
  expect(read, 'items read ahead of a reader that left').to.be.at.most(bound);
}

/**
 * Feeds `stage` the `input`, then a source error: resolves with the error the pipeline rejected
 * with and what the stage wrote before it.
 */
export async function outputBeforeSourceError(
  stage: Duplex,
  input: readonly unknown[],
): Promise<{ error: unknown; written: unknown[] }> {
  const broken = new Error('the source broke');
  async function* failing() {
    yield* input;
    throw broken;
  }
  const written: unknown[] = [];
  const error = await pipeline(
    Readable.from(failing(), { objectMode: true }),
    stage,
    new Writable({
      objectMode: true,
      write(item: unknown, _enc, done) {
        written.push(item);
        done();
      },
    }),
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error, 'the source error is passed on as it is').to.equal(broken);
  return { error, written };
}
