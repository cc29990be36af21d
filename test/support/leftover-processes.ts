import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

// The service processes tests start, each with the test schema it works on. One still alive when
// its schema is dropped (its test failed before stopping it, or it outlives its last test) is
// stopped first, so that it holds no lock the drop waits for; one alive when the run ends is killed
// by the root hook, so that it can neither keep the run from ending nor take the tasks of the
// tests after it.
const alive = new Map<ChildProcess, string>();

/** Registers a started process working on `schema`; it is forgotten once it exits. */
export function tracked(child: ChildProcess, schema: string): ChildProcess {
  alive.set(child, schema);
  child.once('exit', () => alive.delete(child));
  return child;
}

/** How long a process told to stop (SIGTERM) has before it is killed. */
const STOP_GRACE_MS = 5_000;

/**
 * Stops every registered process working on `schema`, and waits until they are gone: SIGTERM
 * first (a process that exits writes its coverage), SIGKILL for one still there after the grace.
 */
export async function stopProcessesOf(schema: string): Promise<void> {
  const of = [...alive].filter(([, s]) => s === schema).map(([child]) => child);
  await Promise.all(
    of.map(async (child) => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    }),
  );
}

/** SIGKILLs every registered process still alive. */
export function killLeftoverProcesses(): void {
  for (const child of alive.keys()) child.kill('SIGKILL');
}
