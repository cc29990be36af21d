import { stringify } from 'csv-stringify/browser/esm/sync';
import { count, h, labelled, saveText, show, table } from './dom.js';
import { errorInWords } from './reason-words.js';
import type { Outcome } from './send-import.js';

/** Outcomes per page of the table. */
const PAGE = 50;

/**
 * What became of every record of an import or a dry run: the counts by outcome, a table filtered
 * by outcome and paged, and the results to download as ndjson (userctl's lines) and CSV.
 */
export function outcomesView(dry: boolean, result: Outcome[], fileName: string): HTMLElement[] {
  const tally = new Map<string, number>();
  for (const o of result) tally.set(o.outcome, (tally.get(o.outcome) ?? 0) + 1);
  const filter = h(
    'select',
    { id: 'outcome-filter' },
    h('option', { value: '' }, 'every outcome'),
    [...tally.keys()].sort().map((o) => h('option', { value: o }, o)),
  );
  const body = h('div', {});
  let page = 0;
  const render = () => {
    const chosen = result.filter((o) => !filter.value || o.outcome === filter.value);
    const last = Math.max(0, Math.ceil(chosen.length / PAGE) - 1);
    page = Math.min(page, last);
    show(
      body,
      table(
        'Record outcomes',
        ['Record', 'Outcome', 'User', 'Reason'],
        chosen
          .slice(page * PAGE, (page + 1) * PAGE)
          .map((o) => [String(o.position + 1), o.outcome, o.user_id ?? '', reasonOf(o)]),
      ),
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            disabled: page === 0,
            onclick: () => {
              page -= 1;
              render();
            },
          },
          'Previous page',
        ),
        `Page ${page + 1} of ${last + 1}`,
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            disabled: page >= last,
            onclick: () => {
              page += 1;
              render();
            },
          },
          'Next page',
        ),
      ),
    );
  };
  filter.addEventListener('change', () => {
    page = 0;
    render();
  });
  const base = fileName.replace(/\.[^.]+$/, '') || 'import';
  const view = [
    h('h3', {}, dry ? 'Dry run: what the import would do' : 'Outcome'),
    h(
      'div',
      { class: 'counts', id: 'outcome-counts' },
      [...tally].map(([o, n]) => h('div', {}, h('strong', {}, count(n)), o)),
    ),
    h(
      'div',
      { class: 'row' },
      labelled('Show', filter),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'download-ndjson',
          onclick: () =>
            saveText(
              `${base}.results.ndjson`,
              result
                .map((o) => JSON.stringify(o))
                .join('\n')
                .concat('\n'),
              'application/x-ndjson',
            ),
        },
        'Download results (ndjson)',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'download-csv',
          onclick: () =>
            saveText(
              `${base}.results.csv`,
              stringify(
                result.map((o) => [o.position, o.outcome, o.user_id ?? '', reasonOf(o)]),
                { header: true, columns: ['position', 'outcome', 'user_id', 'reason'] },
              ),
              'text/csv',
            ),
        },
        'Download results (CSV)',
      ),
    ),
    body,
  ];
  render();
  return view;
}

/** What a record's outcome says in words: its errors' reasons, or its warnings. */
function reasonOf(outcome: Outcome): string {
  if (outcome.errors?.length) return outcome.errors.map(errorInWords).join('; ');
  if (outcome.problem) return outcome.problem;
  return (outcome.warnings ?? []).map((w) => w.message).join('; ');
}
