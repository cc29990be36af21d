import { call, stateOf, type Task } from './admin-api.js';
import { count, h, labelled, show, table } from './dom.js';

/** One line of progress or outcome for a task. */
export function outcomeOf(task: Task): string {
  if (task.error) return `${task.error.reason}: ${task.error.message}`;
  if (task.progress) return `${count(task.progress.processed)} of ${count(task.progress.total)}`;
  if (task.summary)
    return Object.entries(task.summary)
      .map(([name, n]) => `${name} ${count(n)}`)
      .join(', ');
  if (task.record_count !== undefined) return `${count(task.record_count)} records`;
  return '';
}

/** Every import or export of the project, newest first, a page at a time, by state. */
export function tasksScreen(main: HTMLElement, fail: (err: unknown) => void): void {
  const kind = h(
    'select',
    { id: 'tasks-kind' },
    h('option', { value: 'import' }, 'Imports'),
    h('option', { value: 'export' }, 'Exports'),
  );
  const status = h(
    'select',
    { id: 'tasks-status' },
    h('option', { value: '' }, 'Any'),
    ['pending', 'completed', 'failed'].map((s) => h('option', { value: s }, s)),
  );
  const list = h('div', { 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More');
  let next: string | undefined;
  let rows: Task[] = [];
  const render = () =>
    show(
      list,
      rows.length === 0
        ? h('p', {}, 'No tasks.')
        : table(
            `${kind.value} tasks`,
            ['Task', 'State', 'Created', 'Completed', 'Progress or outcome'],
            rows.map((t) => [
              h('code', {}, t.id),
              stateOf(t),
              t.created_at,
              t.failed_at ?? t.completed_at ?? '',
              outcomeOf(t),
            ]),
          ),
    );
  const load = async (path: string, append: boolean) => {
    try {
      const page = await call<{ tasks: Task[]; next?: string }>('GET', path);
      rows = append ? [...rows, ...page.tasks] : page.tasks;
      next = page.next;
      more.hidden = !next;
      render();
    } catch (err) {
      fail(err);
    }
  };
  const reload = () => {
    const query = new URLSearchParams({ limit: '25' });
    if (status.value) query.set('status', status.value);
    void load(`/_api/admin/users/${kind.value}?${query}`, false);
  };
  kind.addEventListener('change', reload);
  status.addEventListener('change', reload);
  more.addEventListener('click', () => next && void load(next, true));
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
