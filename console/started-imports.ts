import { call, stateOf, type Task } from './admin-api.js';
import { h, table } from './dom.js';
import { outcomeOf } from './tasks-screen.js';

// The imports a tab started, kept in its session storage: the import screen shows them again, with
// where they stand, when the admin comes back to it (or reloads the page) in the middle of one.

const STARTED_KEY = 'users-console.imports';
/** The most imports a tab remembers. */
const REMEMBERED = 20;

/** An import started from this tab: its file, whether a dry run, when, and its tasks so far. */
interface StartedImport {
  readonly file: string;
  readonly dryRun: boolean;
  readonly at: string;
  readonly tasks: string[];
}

const all = (): StartedImport[] => JSON.parse(sessionStorage.getItem(STARTED_KEY) ?? '[]') as StartedImport[];

export const startedImports = {
  /** An import about to send its first request. */
  begin: (file: string, dryRun: boolean): StartedImport => ({
    file,
    dryRun,
    at: new Date().toISOString(),
    tasks: [],
  }),
  /** A task of the import was accepted: remembered at once, in case the admin leaves. */
  taskStarted(entry: StartedImport, id: string): void {
    const others = all().filter((e) => e.at !== entry.at || e.file !== entry.file);
    entry.tasks.push(id);
    sessionStorage.setItem(STARTED_KEY, JSON.stringify([entry, ...others].slice(0, REMEMBERED)));
  },
};

/** The imports started from this tab and where each task stands now; null when there are none. */
export async function startedImportsView(): Promise<HTMLElement | null> {
  const entries = all();
  if (entries.length === 0) return null;
  const rows = [];
  for (const entry of entries) {
    for (const id of entry.tasks) {
      const task = await call<Task>('GET', `/_api/admin/users/import/${id}?details=false`).catch(
        () => undefined,
      );
      rows.push([
        entry.file,
        entry.dryRun ? 'dry run' : 'import',
        h('code', {}, id),
        task ? stateOf(task) : 'gone',
        task ? outcomeOf(task) : '',
      ]);
    }
  }
  return h(
    'div',
    {},
    h('h3', {}, 'Imports started in this tab'),
    table('Imports started in this tab', ['File', 'Kind', 'Task', 'State', 'Progress or outcome'], rows),
  );
}
