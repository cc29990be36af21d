import { expect } from 'chai';
import { createLogger } from '../../../pipeline/log.js';
import { startRelayLoop } from '../../../pipeline/relay-loop.js';
import { eventually } from '../../support/eventually.js';

const log = createLogger('silent');
/** A tick long enough that only a wake-up or a full batch can start a second round in a test. */
const SLOW_TICK_MS = 60_000;

describe('relay-loop', () => {
  it('runs a round at start, and another at once when woken', async () => {
    let rounds = 0;
    const loop = startRelayLoop('test relay', SLOW_TICK_MS, log, async () => {
      rounds++;
      return false;
    });
    await eventually(
      async () => rounds,
      (n) => n === 1,
    );
    loop.wake();
    expect(
      await eventually(
        async () => rounds,
        (n) => n === 2,
      ),
    ).to.equal(2);
    await loop.stop();
  });

  it('runs again at once while a round leaves more waiting, and retries a round that failed', async () => {
    const waiting = [3];
    let failures = 1;
    const calls: string[] = [];
    const loop = startRelayLoop('test relay', 20, log, async () => {
      if (failures-- > 0) {
        calls.push('failed');
        throw new Error('the bus is down');
      }
      if ((waiting[0] ?? 0) === 0) return false; // nothing left: idle rounds
      const left = (waiting[0] ?? 0) - 1;
      waiting[0] = left;
      calls.push(`left ${left}`);
      return left > 0;
    });
    await eventually(
      async () => waiting[0],
      (left) => left === 0,
    );
    await loop.stop();
    expect(calls).to.deep.equal(['failed', 'left 2', 'left 1', 'left 0']);
  });

  it('stops after the round at hand and runs no other', async () => {
    let rounds = 0;
    const loop = startRelayLoop('test relay', 5, log, async () => {
      rounds++;
      return true; // always more: only stop ends it
    });
    await eventually(
      async () => rounds,
      (n) => n > 3,
    );
    await loop.stop();
    const after = rounds;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(rounds).to.equal(after);
  });
});
