import { spawn } from 'node:child_process';
import { expect } from 'chai';

/** Runs test/support/service-process.ts to its end; SIGTERM once it is ready when `signal`. */
async function run(ending: string, signal?: NodeJS.Signals): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/service-process.ts', ending], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (signal && out.includes('ready')) child.kill(signal);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out };
}

describe('service lifecycle', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops every started part, last first, and exits 0 on ${signal}`, async () => {
      const { code, out } = await run('ready', signal);
      expect(code).to.equal(0);
      expect(out).to.equal('ready\nstopped second\nstopped first\n');
    });
  }

  it('exits 1 once the stop deadline passes when a part never stops', async () => {
    const started = Date.now();
    const { code, out } = await run('stuck', 'SIGTERM');
    expect(code).to.equal(1);
    expect(out, 'the parts after it stopped').to.equal('ready\nstopped second\n');
    expect(Date.now() - started, 'after the deadline (1 s here)').to.be.above(1_000);
  });

  for (const ending of ['fail-start', 'throw', 'reject']) {
    it(`stops every started part, last first, and exits 1 on ${ending}`, async () => {
      const { code, out } = await run(ending);
      expect(code).to.equal(1);
      expect(out).to.match(/^(ready\n)?stopped second\nstopped first\n$/);
    });
  }
});
