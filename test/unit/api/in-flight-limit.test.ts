import { expect } from 'chai';
import type { Context, Next } from 'koa';
import { inFlightLimit } from '../../../api/in-flight-limit.js';

/** A request whose handler runs until `finish` is called. */
function held(): { started: boolean; finish: () => void; next: Next } {
  const request = { started: false, finish: () => {}, next: (() => Promise.resolve()) as Next };
  request.next = () =>
    new Promise<void>((resolve) => {
      request.started = true;
      request.finish = resolve;
    });
  return request;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('api/in-flight-limit', () => {
  it('lets `max` requests through at once; the others wait and go in order as each one ends', async () => {
    const limit = inFlightLimit(2);
    const requests = [held(), held(), held(), held()];
    const done = requests.map((r) => limit({} as Context, r.next));
    await tick();
    expect(requests.map((r) => r.started)).to.deep.equal([true, true, false, false]);
    requests[1]?.finish();
    await tick();
    expect(requests.map((r) => r.started)).to.deep.equal([true, true, true, false]);
    requests[0]?.finish();
    await tick();
    expect(requests.map((r) => r.started)).to.deep.equal([true, true, true, true]);
    for (const r of requests) r.finish();
    await Promise.all(done);
  });

  it('frees its place when a request fails', async () => {
    const limit = inFlightLimit(1);
    const failing = limit({} as Context, () => Promise.reject(new Error('handler failed')));
    const after = held();
    const waiting = limit({} as Context, after.next);
    const outcome = await failing.then(
      () => 'resolved',
      (err: Error) => err.message,
    );
    expect(outcome).to.equal('handler failed');
    await tick();
    expect(after.started).to.equal(true);
    after.finish();
    await waiting;
  });
});
