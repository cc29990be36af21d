import { call, stateOf, type Task } from './admin-api.js';
import { count, h, labelled, show, table } from './dom.js';
import { errorInWords } from './reason-words.js';
import { type ListedTask, runState, runSummary, type TaskRun, taskRuns } from './task-runs.js';

/** A summary's counts in one line: `inserted 2, failed 1`. */
const summaryText = (summary: Record<string, number>) =>
  Object.entries(summary)
    .map(([name, n]) => `${name} ${count(n)}`)
    .join(', ');

/** One line of progress or outcome for a task. */
export function outcomeOf(task: Task): string {
  if (task.error) return errorInWords(task.error);
  if (task.progress) return `${count(task.progress.processed)} of ${count(task.progress.total)}`;
  if (task.summary) return summaryText(task.summary);
  if (task.record_count !== undefined) return `${count(task.record_count)} records`;
  return '';
}

/** The kinds the list shows for each choice of its Kind control. */
const KINDS: Readonly<Record<string, readonly ('import' | 'export')[]>> = {
  '': ['import', 'export'],
  import: ['import'],
  export: ['export'],
};

/**
 * The project's imports and exports together (or one kind), newest first, a page of each at a
 * time, by state; the requests of one userctl run or one console import as one row that opens into
 * its tasks.
 */
export function tasksScreen(main: HTMLElement, fail: (err: unknown) => void): void {
  const kind = h(
    'select',
    { id: 'tasks-kind' },
    h('option', { value: '' }, 'Imports and exports'),
    h('option', { value: 'import' }, 'Imports'),
    h('option', { value: 'export' }, 'Exports'),
  );
  const status = h(
    'select',
    { id: 'tasks-status' },
    h('option', { value: '' }, 'Any'),
    ['pending', 'completed', 'failed'].map((s) => h('option', { value: s }, s)),
  );
  const list = h('div', { 'aria-live': 'polite', id: 'tasks-list' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More');
  // The next page of each kind's list, while it has one.
  let next = new Map<'import' | 'export', string>();
  let rows: ListedTask[] = [];
  const render = () => {
    const runs = taskRuns(rows);
    show(
      list,
      runs.length === 0
        ? h('p', {}, 'No tasks.')
        : table(
            'Tasks',
            ['Kind', 'Task', 'State', 'Created', 'Completed', 'Progress or outcome'],
            runs.map((run) => runRow(run)),
          ),
    );
  };
  const load = async (paths: readonly ['import' | 'export', string][], append: boolean) => {
    try {
      const pages = await Promise.all(
        paths.map(async ([k, path]) => {
          const page = await call<{ tasks: Task[]; next?: string }>('GET', path);
          return { k, page };
        }),
      );
      const found = pages.flatMap(({ k, page }) => page.tasks.map((t) => ({ ...t, kind: k })));
      if (!append) next = new Map();
      for (const { k, page } of pages) {
        if (page.next) next.set(k, page.next);
        else next.delete(k);
      }
      rows = [...(append ? rows : []), ...found].sort((a, b) => b.created_at.localeCompare(a.created_at));
      more.hidden = next.size === 0;
      render();
    } catch (err) {
      fail(err);
    }
  };
  const reload = () => {
    const query = new URLSearchParams({ limit: '25' });
    if (status.value) query.set('status', status.value);
    void load(
      (KINDS[kind.value] ?? []).map((k) => [k, `/_api/admin/users/${k}?${query}`] as const),
      false,
    );
  };
  kind.addEventListener('change', reload);
  status.addEventListener('change', reload);
  more.addEventListener('click', () => void load([...next], true));
  show(
    main,
    h('h2', {}, 'Tasks'),
    h(
      'section',
      {},
      h(
        'div',
        { class: 'row' },
        labelled('Kind', kind),
        labelled('State', status),
        h('button', { type: 'button', class: 'secondary', onclick: reload }, 'Refresh'),
      ),
    ),
    list,
    more,
  );
  reload();
}

/** A run as one row: a task alone as itself, the tasks of a run summed up and listed inside. */
function runRow(run: TaskRun) {
  const [newest] = run.tasks;
  const oldest = run.tasks[run.tasks.length - 1];
  if (!newest || !oldest) return [];
  if (run.tasks.length === 1)
    return [
      run.kind,
      h('code', {}, newest.id),
      stateOf(newest),
      newest.created_at,
      newest.failed_at ?? newest.completed_at ?? '',
      outcomeOf(newest),
    ];
  const state = runState(run, stateOf);
  const summary = runSummary(run);
  const ended = run.tasks.map((t) => t.failed_at ?? t.completed_at ?? '');
  return [
    run.kind,
    h(
      'details',
      { class: 'run' },
      h('summary', {}, `${count(run.tasks.length)} ${run.kind}s of one run`),
      h(
        'ul',
        {},
        [...run.tasks]
          .reverse()
          .map((t) => h('li', {}, h('code', {}, t.id), ` ${stateOf(t)}: ${outcomeOf(t)}`)),
      ),
    ),
    state,
    oldest.created_at,
    state === 'completed' || state === 'failed' ? (ended.sort().at(-1) ?? '') : '',
    summary ? summaryText(summary) : '',
  ];
}
