import type { Task } from './admin-api.js';

/** A task of the list with its kind (the lists answer one kind each). */
export type ListedTask = Task & { readonly kind: 'import' | 'export' };

/** The tasks of one run: the requests one userctl run or one console import sent, or a task alone. */
export interface TaskRun {
  readonly kind: 'import' | 'export';
  readonly tasks: readonly ListedTask[];
}

/**
 * The run a task belongs to: its Idempotency-Key without the request's place in the run (userctl
 * names its requests `<run>-<n>`, the console `<run>.<n>`); a task asked for without a key is a
 * run of its own.
 */
export function runKey(task: ListedTask): string {
  const key = task.idempotency_key;
  const run = key === undefined ? undefined : /^(.+)[.-]\d+$/.exec(key)?.[1];
  return `${task.kind} ${run ?? task.id}`;
}

/** Tasks (newest first) as runs, each where its newest task is, its tasks newest first. */
export function taskRuns(tasks: readonly ListedTask[]): TaskRun[] {
  const runs = new Map<string, ListedTask[]>();
  for (const task of tasks) {
    const key = runKey(task);
    const run = runs.get(key);
    if (run) run.push(task);
    else runs.set(key, [task]);
  }
  return [...runs.values()].map((run) => ({ kind: run[0]?.kind ?? 'import', tasks: run }));
}

/** A run's state in one word: failed when one failed, pending or running while one is, else completed. */
export function runState(run: TaskRun, stateOf: (task: Task) => string): string {
  const states = run.tasks.map(stateOf);
  for (const state of ['failed', 'running', 'pending']) if (states.includes(state)) return state;
  return 'completed';
}

/** The counts of a run's summaries added up (`inserted`, `failed`, ...), in the order first met. */
export function runSummary(run: TaskRun): Record<string, number> | undefined {
  const total: Record<string, number> = {};
  let any = false;
  for (const task of run.tasks) {
    for (const [name, n] of Object.entries(task.summary ?? {})) {
      total[name] = (total[name] ?? 0) + n;
      any = true;
    }
  }
  return any ? total : undefined;
}
