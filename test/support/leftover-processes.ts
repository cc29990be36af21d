import type { ChildProcess } from 'node:child_process';

// The service processes tests start. One still alive when the run ends (its test failed before
// stopping it, or a hook timed out first) is killed by the root hook, so that it can neither keep
// the run from ending nor take the tasks of the tests after it.
const alive = new Set<ChildProcess>();

/** Registers a started process; it is forgotten once it exits. */
export function tracked(child: ChildProcess): ChildProcess {
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  return child;
}

/** SIGKILLs every registered process still alive. */
export function killLeftoverProcesses(): void {
  for (const child of alive) child.kill('SIGKILL');
}
