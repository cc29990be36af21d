import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

// The service processes tests start, each with the test schema it works on. One still alive when
// its schema is dropped (its test failed before stopping it, or it outlives its last test) is
// killed first, so that it holds no lock the drop waits for; one alive when the run ends is killed
// by the root hook, so that it can neither keep the run from ending nor take the tasks of the
// tests after it.
const alive = new Map<ChildProcess, string>();

/** Registers a started process working on `schema`; it is forgotten once it exits. */
export function tracked(child: ChildProcess, schema: string): ChildProcess {
  alive.set(child, schema);
  child.once('exit', () => alive.delete(child));
  return child;
}

/** SIGKILLs every registered process working on `schema`, and waits until they are gone. */
export async function killProcessesOf(schema: string): Promise<void> {
  const of = [...alive].filter(([, s]) => s === schema).map(([child]) => child);
  await Promise.all(
    of.map(async (child) => {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

/** SIGKILLs every registered process still alive. */
export function killLeftoverProcesses(): void {
  for (const child of alive.keys()) child.kill('SIGKILL');
}
