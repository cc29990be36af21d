import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { keepBeating, whileWorking } from '../../../pipeline/keep-alive.js';

describe('keep-alive', () => {
  it('beats while the work runs, and not after it settled', async () => {
    let beats = 0;
    const result = await whileWorking(
      async () => {
        beats++;
      },
      10,
      async () => {
        await sleep(80);
        return 'done';
      },
    );
    expect(result).to.equal('done');
    expect(beats).to.be.greaterThan(2);
    const after = beats;
    await sleep(50);
    expect(beats, 'no beat once the work settled').to.equal(after);
  });

  it('never runs two beats at once: a slow beat passes the ticks over', async () => {
    let running = 0;
    let most = 0;
    let beats = 0;
    const beating = keepBeating(async () => {
      running++;
      beats++;
      most = Math.max(most, running);
      await sleep(35);
      running--;
    }, 5);
    await sleep(120);
    beating.stop();
    expect(most).to.equal(1);
    expect(beats).to.be.greaterThan(1);
  });

  it('stops the beat when the work fails, and drops a failed beat', async () => {
    let beats = 0;
    const outcome = await whileWorking(
      async () => {
        beats++;
        throw new Error('a beat failed');
      },
      5,
      async () => {
        await sleep(30);
        throw new Error('the work failed');
      },
    ).catch((err: Error) => err.message);
    expect(outcome).to.equal('the work failed');
    expect(beats).to.be.greaterThan(1);
    const after = beats;
    await sleep(30);
    expect(beats).to.equal(after);
  });
});
