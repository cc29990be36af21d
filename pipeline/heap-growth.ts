import { setFlagsFromString } from 'node:v8';

// How far V8 lets the process's old generation grow past what its last full collection kept, set
// by the imports it runs. An import's batch lives through its transaction, long enough to reach the
// old generation: under V8's own growth (about 30% for a heap as small as the workers') the worker
// ran a full collection every few batches, so while an import runs the old generation may grow
// further first. An export holds a few hundred records at a time, and what it leaves in the old
// generation is garbage that only a full collection frees: the same growth only raised its peak
// RSS. So when no import runs, the growth is V8's own again. The setting belongs to the process,
// whoever runs the imports in it. V8 reads it at each full collection; Node gives no promise that a
// V8 flag set after start takes effect, so a unit test checks that this one does.

let importsRunning = 0;
/** The growth set last (0: V8's own). */
let applied = 0;

/**
 * Marks an import as running in this process, the old generation's growth raised to `percent`
 * (0: left to V8) until the returned release is called.
 */
export function importRunning(
  percent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
): () => void {
  importsRunning++;
  applyGrowth(percent, setFlags);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    importsRunning--;
    applyGrowth(percent, setFlags);
  };
}

function applyGrowth(percent: number, setFlags: (flags: string) => void): void {
  const growth = importsRunning > 0 ? percent : 0;
  if (growth === applied) return;
  applied = growth;
  setFlags(`--heap-growing-percent=${growth}`);
}
