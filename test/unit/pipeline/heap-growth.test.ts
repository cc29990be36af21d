import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { importRunning } from '../../../pipeline/heap-growth.js';

const MODULE = new URL('../../../pipeline/heap-growth.ts', import.meta.url).href;

/**
 * Full collections of a child process that keeps about 30 MB alive and churns objects that live
 * long enough to be promoted, with the old generation's growth as one running import
 * (`importing`) or one that ended leaves it.
 */
function fullCollections(importing: boolean): number {
  const script = `
    const { PerformanceObserver, constants } = await import('node:perf_hooks');
    const { importRunning } = await import(${JSON.stringify(MODULE)});
    let full = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
    }).observe({ entryTypes: ['gc'] });
    const release = importRunning(900);
    if (${!importing}) release();
    const live = Array.from({ length: 300000 }, (_, i) => ({ i, text: 'live ' + i }));
    const recent = [];
    let round = 0;
    const step = () => {
      for (let k = 0; k < 50; k++) {
        recent.push(Array.from({ length: 3000 }, (_, i) => ({ i, text: 'churn ' + i })));
        if (recent.length > 40) recent.shift();
      }
      if (++round < 60) setImmediate(step);
      else setTimeout(() => console.log(full, live.length), 10);
    };
    step();`;
  const out = execFileSync(
    process.execPath,
    [
      '--max-old-space-size=256',
      '--max-semi-space-size=8',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ],
    { encoding: 'utf8' },
  );
  return Number(out.split(' ')[0]);
}

describe('heap growth while imports run', () => {
  it('raises the growth as the first import starts and gives it back to V8 as the last one ends', () => {
    const set: string[] = [];
    const record = (flags: string) => set.push(flags);
    const first = importRunning(60, record);
    const second = importRunning(60, record);
    expect(set).to.deep.equal(['--heap-growing-percent=60']);
    first();
    first();
    expect(set, 'one import still runs').to.deep.equal(['--heap-growing-percent=60']);
    second();
    expect(set).to.deep.equal(['--heap-growing-percent=60', '--heap-growing-percent=0']);
  });

  it('never sets the growth when it is 0 (V8 chooses it always)', () => {
    const set: string[] = [];
    importRunning(0, (flags) => set.push(flags))();
    expect(set).to.deep.equal([]);
  });

  it("changes V8's full collections in a running process", function () {
    this.timeout(60_000);
    const raised = fullCollections(true);
    const own = fullCollections(false);
    expect(own, `full collections: ${raised} raised, ${own} V8's own`).to.be.above(raised * 2);
  });
});
