// A service process for test/unit/pipeline/lifecycle.test.ts: two parts that print when they stop,
// then the ending named by argv[2] (`ready`: wait for a signal; `stuck`: the same, but the first
// part never stops; `throw`, `reject`: fail later; `fail-start`: fail while starting, after the
// two parts).

import { writeSync } from 'node:fs';
import { runService } from '../../pipeline/lifecycle.js';
import { createLogger } from '../../pipeline/log.js';

const ending = process.argv[2];
const log = createLogger('silent');

await runService(
  log,
  async ({ started }) => {
    for (const part of ['first', 'second']) {
      // Written at once: the process exits right after its last part stops.
      started(part, async () => {
        if (ending === 'stuck' && part === 'first') await new Promise(() => {});
        writeSync(1, `stopped ${part}\n`);
      });
    }
    if (ending === 'fail-start') throw new Error('port taken');
    if (ending === 'throw') {
      setTimeout(() => {
        throw new Error('boom');
      }, 10);
    }
    if (ending === 'reject') setTimeout(() => void Promise.reject(new Error('boom')), 10);
    // Something to keep running, as a server or a consumer does.
    setInterval(() => {}, 60_000);
    writeSync(1, 'ready\n');
  },
  { stopDeadlineMs: 1_000 },
);
