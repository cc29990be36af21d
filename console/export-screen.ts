import { SPEC_POINTERS } from '../pipeline/export/pointers.js';
import { call, type Task } from './admin-api.js';
import { count, h, labelled, show } from './dom.js';
import { follow } from './follow-task.js';

interface Field {
  pointer: string;
  name: string;
}

/** The default column name of a pointer: the pointer without its leading slash. */
const defaultName = (pointer: string) => pointer.slice(1).replaceAll('/', '.');

/**
 * An export: format, the CSV columns (picked from the spec's pointers or a custom attribute's,
 * in an order and with names the admin edits; names must be unique), the filters, gzip, formula
 * escaping (on: the console's files are opened in spreadsheets), its progress and the download.
 */
export function exportScreen(main: HTMLElement, fail: (err: unknown) => void): void {
  const fields: Field[] = [
    { pointer: '/sub', name: 'sub' },
    { pointer: '/email', name: 'email' },
  ];
  const format = h(
    'select',
    { id: 'export-format' },
    h('option', { value: 'csv' }, 'CSV'),
    h('option', { value: 'ndjson' }, 'ndjson'),
  );
  const pointer = h(
    'select',
    { id: 'export-pointer' },
    SPEC_POINTERS.map((p) => h('option', { value: p }, p)),
  );
  const custom = h('select', { id: 'export-custom' });
  const fieldList = h('ol', { id: 'export-fields' });
  const problem = h('p', { role: 'alert' });
  const createdAfter = h('input', { type: 'datetime-local', id: 'export-created-after' });
  const updatedSince = h('input', { type: 'datetime-local', id: 'export-updated-since' });
  const disabled = h(
    'select',
    { id: 'export-disabled' },
    h('option', { value: '' }, 'all users'),
    h('option', { value: 'false' }, 'enabled only'),
    h('option', { value: 'true' }, 'disabled only'),
  );
  const gzip = h('input', { type: 'checkbox', id: 'export-gzip' });
  const escapeFormulas = h('input', { type: 'checkbox', id: 'export-escape', checked: true });
  const start = h('button', { type: 'submit', id: 'export-start' }, 'Start export');
  const progress = h('div', { 'aria-live': 'polite', id: 'export-progress' });

  const add = (p: string) => {
    fields.push({ pointer: p, name: defaultName(p) });
    renderFields();
  };
  const renderFields = () => {
    show(
      fieldList,
      fields.map((field, n) => {
        const name = h('input', {
          type: 'text',
          value: field.name,
          'aria-label': `Column name of ${field.pointer}`,
        });
        name.addEventListener('input', () => {
          field.name = name.value;
          check();
        });
        const move = (by: number) => () => {
          const [moved] = fields.splice(n, 1);
          if (moved) fields.splice(n + by, 0, moved);
          renderFields();
        };
        return h(
          'li',
          { class: 'row' },
          h('code', {}, field.pointer),
          name,
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              disabled: n === 0,
              onclick: move(-1),
              'aria-label': `Move ${field.pointer} up`,
            },
            '↑',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              disabled: n === fields.length - 1,
              onclick: move(1),
              'aria-label': `Move ${field.pointer} down`,
            },
            '↓',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                fields.splice(n, 1);
                renderFields();
              },
              'aria-label': `Remove ${field.pointer}`,
            },
            'Remove',
          ),
        );
      }),
    );
    check();
  };
  /** Unique column names, checked before anything is sent (the service checks them too). */
  const check = (): boolean => {
    const names = fields.map((f) => f.name.trim());
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    const empty = names.some((n) => n === '');
    const ok = format.value !== 'csv' || (fields.length > 0 && repeated.length === 0 && !empty);
    show(
      problem,
      ok
        ? null
        : h(
            'span',
            { class: 'error' },
            empty
              ? 'Every column needs a name.'
              : repeated.length
                ? `Column names must be unique: ${[...new Set(repeated)].join(', ')}`
                : 'Pick at least one column.',
          ),
    );
    start.disabled = !ok;
    return ok;
  };
  format.addEventListener('change', () => {
    columns.hidden = format.value !== 'csv';
    check();
  });

  const run = async () => {
    if (!check()) return;
    const time = (input: HTMLInputElement) => (input.value ? new Date(input.value).toISOString() : undefined);
    const request = {
      format: format.value,
      ...(format.value === 'csv'
        ? {
            csv: {
              fields: fields.map((f) => ({ pointer: f.pointer, field_name: f.name.trim() })),
              escape_formulas: escapeFormulas.checked,
            },
          }
        : {}),
      ...(gzip.checked ? { compression: 'gzip' } : {}),
      ...(time(createdAfter) ? { created_after: time(createdAfter) } : {}),
      ...(time(updatedSince) ? { updated_since: time(updatedSince) } : {}),
      ...(disabled.value ? { disabled: disabled.value === 'true' } : {}),
    };
    start.disabled = true;
    try {
      const created = await call<Task>('POST', '/_api/admin/users/export', request);
      const bar = h('progress', { max: 1, value: 0, 'aria-label': 'Export progress' });
      const line = h('p', {}, 'Waiting for a worker…');
      show(progress, bar, line);
      const done = await follow(`/_api/admin/users/export/${created.id}`, (task) => {
        if (!task.progress) return;
        bar.max = Math.max(task.progress.total, 1);
        bar.value = task.progress.processed;
        show(line, `${count(task.progress.processed)} of ${count(task.progress.total)} users written`);
      });
      if (done.error) {
        show(progress, h('p', { class: 'error' }, `${done.error.reason}: ${done.error.message}`));
      } else {
        show(
          progress,
          h('p', { class: 'ok' }, `Done: ${count(done.record_count ?? 0)} records.`),
          h('a', { href: done.download_url ?? '#', id: 'export-download' }, 'Download the file'),
          h('p', {}, 'The link is signed for a minute; the Tasks screen signs a fresh one.'),
        );
      }
    } catch (err) {
      fail(err);
    } finally {
      start.disabled = false;
    }
  };

  const columns = h(
    'fieldset',
    {},
    h('legend', {}, 'Columns (CSV)'),
    h(
      'div',
      { class: 'row' },
      labelled('Field', pointer),
      h(
        'button',
        { type: 'button', class: 'secondary', id: 'export-add', onclick: () => add(pointer.value) },
        'Add field',
      ),
    ),
    h(
      'div',
      { class: 'row', id: 'export-custom-row', hidden: true },
      labelled('Custom attribute', custom),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => custom.value && add(`/custom_attributes/${custom.value}`),
        },
        'Add custom attribute',
      ),
    ),
    fieldList,
    problem,
    h(
      'label',
      { class: 'check' },
      escapeFormulas,
      "Escape formulas (a cell starting with = + - @ gets a leading ')",
    ),
  );
  // The project's declared custom attributes: the only ones an export reads.
  call<{ custom_attributes: { name: string; type: string }[] }>('GET', '/console/project.json').then(
    (project) => {
      show(
        custom,
        project.custom_attributes.map((a) => h('option', { value: a.name }, `${a.name} (${a.type})`)),
      );
      const row = columns.querySelector('#export-custom-row') as HTMLElement;
      row.hidden = project.custom_attributes.length === 0;
    },
    fail,
  );
  show(
    main,
    h('h2', {}, 'Export'),
    h(
      'form',
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void run();
        },
      },
      h('section', {}, labelled('Format', format), h('label', { class: 'check' }, gzip, 'gzip')),
      columns,
      h(
        'fieldset',
        {},
        h('legend', {}, 'Users'),
        labelled('Created after', createdAfter),
        labelled('Updated since', updatedSince),
        labelled('Disabled', disabled),
      ),
      start,
    ),
    progress,
  );
  renderFields();
}
