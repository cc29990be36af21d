import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a process's old generation grow past what its last full collection kept, set by
 * the imports it runs. An import's batch lives through its transaction, long enough to reach the
 * old generation: under V8's own growth (about 30% for a heap as small as the workers') the worker
 * ran a full collection every few batches, so while an import runs the old generation may grow by
 * `percent` first. An export holds a few hundred records at a time, and what it leaves in the old
 * generation is garbage that only a full collection frees: the same growth only raised its peak
 * RSS. So when no import runs, the growth is V8's own again. V8 reads the flag at each full
 * collection, so a change applies from the next one.
 */
export function importHeapGrowth(
  percent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
): (runningImports: number) => void {
  let raised = false;
  return (runningImports) => {
    const raise = runningImports > 0 && percent > 0;
    if (raise === raised) return;
    raised = raise;
    // 0: V8 chooses the growth itself.
    setFlags(`--heap-growing-percent=${raise ? percent : 0}`);
  };
}
