import { parse } from 'csv-parse/browser/esm/sync';
import { stringify } from 'csv-stringify/browser/esm/sync';
import { email, phone_number, preferred_username } from 'record-validators';
import { type RequestChunk, requestChunks } from '../../../cli/import/request-chunks.js';
import {
  type ColumnMapping,
  CSV_OPTIONS,
  defaultMapping,
  type FileRecord,
  formatOf,
  type RecordFormat,
  textFileRecords,
} from '../../../cli/records/file-records.js';
import { importRecordSchema } from '../../../schemas/import-record.schema.js';
import { call, stateOf, type Task } from './admin-api.js';
import { count, h, labelled, saveText, show, table } from './dom.js';
import { type Outcome, sendImport } from './send-import.js';

/** The largest file the console reads (it holds the file in the tab); larger ones: `userctl import`. */
const MAX_FILE_BYTES = 100 * 1024 * 1024;
/** Records shown in the preview, and outcomes per page of the outcome table. */
const PREVIEW = 5;
const PAGE = 50;
const STARTED_KEY = 'users-console.imports';

/** The imports this tab started: shown again when the admin comes back to the screen. */
interface StartedImport {
  readonly file: string;
  readonly dryRun: boolean;
  readonly at: string;
  readonly tasks: string[];
}

const started = {
  all: (): StartedImport[] => JSON.parse(sessionStorage.getItem(STARTED_KEY) ?? '[]') as StartedImport[],
  add: (entry: StartedImport) =>
    sessionStorage.setItem(STARTED_KEY, JSON.stringify([entry, ...started.all()].slice(0, 20))),
};

const csvRows = (text: string) => parse(text, { ...CSV_OPTIONS }) as Record<string, string>[];
const csvHeader = (text: string) =>
  ((parse(text, { bom: true, to_line: 1 }) as string[][])[0] ?? []).map(String);

/** The record checks of each identifier, generated from the schema the workers check with. */
const RECORD_VALIDATORS = { email, phone_number, preferred_username };

/** The members an import record has, for the mapping's suggestions. */
const MEMBERS = Object.keys(importRecordSchema.properties).sort();

/**
 * An import: a file (ndjson, JSON array, CSV) read by the module userctl reads with; for CSV a
 * column mapping; a preview of the first records exactly as they will be sent, with every
 * record's validation errors before anything is sent; a dry run's counts and failing records;
 * then the import itself with its live progress, the outcome table and the results to download.
 */
export function importScreen(main: HTMLElement, fail: (err: unknown) => void): void {
  let text = '';
  let fileName = '';
  let mapping: Record<string, string> = {};
  let records: FileRecord[] = [];

  const file = h('input', { type: 'file', id: 'import-file', accept: '.ndjson,.jsonl,.json,.csv,.txt' });
  const drop = h('div', { class: 'drop', id: 'import-drop' }, 'Drop a file here, or pick one: ', file);
  const format = h(
    'select',
    { id: 'import-format' },
    ['ndjson', 'json', 'csv'].map((f) => h('option', { value: f }, f)),
  );
  const identifier = h(
    'select',
    { id: 'import-identifier' },
    ['email', 'phone_number', 'preferred_username'].map((f) => h('option', { value: f }, f)),
  );
  const upsert = h('input', { type: 'checkbox', id: 'import-upsert' });
  const mappingBox = h('fieldset', { hidden: true, id: 'import-mapping' });
  const preview = h('section', { 'aria-live': 'polite', id: 'import-preview' });
  const dryRun = h('button', { type: 'button', id: 'import-dry-run', disabled: true }, 'Dry run');
  const run = h('button', { type: 'button', id: 'import-run', disabled: true }, 'Run import');
  const progress = h('section', { 'aria-live': 'polite', id: 'import-progress', hidden: true });
  const outcomes = h('div', { id: 'import-outcomes' });
  const previous = h('section', { id: 'import-started' });

  const suggestions = h(
    'datalist',
    { id: 'import-members' },
    MEMBERS.map((m) => h('option', { value: m })),
  );

  const read = () => {
    try {
      const chosen = format.value as RecordFormat;
      records =
        text === ''
          ? []
          : textFileRecords(text, chosen, csvRows, chosen === 'csv' ? (mapping as ColumnMapping) : undefined);
    } catch (err) {
      records = [];
      show(
        preview,
        h('p', { class: 'error' }, `The file cannot be read as ${format.value}: ${(err as Error).message}`),
      );
      dryRun.disabled = run.disabled = true;
      return;
    }
    renderPreview();
  };

  const renderMapping = () => {
    mappingBox.hidden = format.value !== 'csv' || text === '';
    if (mappingBox.hidden) return;
    const header = csvHeader(text);
    if (Object.keys(mapping).join('\n') !== header.join('\n')) mapping = { ...defaultMapping(header) };
    show(
      mappingBox,
      h('legend', {}, 'Column mapping: each column to a record member (empty: left out)'),
      table(
        'Column mapping',
        ['Column', 'Record member'],
        header.map((column) => {
          const input = h('input', {
            type: 'text',
            list: 'import-members',
            value: mapping[column] ?? '',
            'aria-label': `Member for column ${column}`,
          });
          input.addEventListener('change', () => {
            mapping[column] = input.value.trim();
            read();
          });
          return [h('code', {}, column), input];
        }),
      ),
    );
  };

  /** The first records as sent, and every record's problem: the file's own, or the schema's. */
  const renderPreview = () => {
    const validate = RECORD_VALIDATORS[identifier.value as keyof typeof RECORD_VALIDATORS];
    const problems: { position: number; problem: string }[] = [];
    for (const item of records) {
      if ('problem' in item) problems.push(item);
      else if (!validate(item.record))
        problems.push({
          position: item.position,
          problem: (validate.errors ?? [])
            .map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`)
            .join('; '),
        });
    }
    const first = records
      .slice(0, PREVIEW)
      .map((r) =>
        'record' in r ? JSON.stringify(r.record, null, 2) : `(record ${r.position + 1}: ${r.problem})`,
      );
    show(
      preview,
      h('h3', {}, 'Preview'),
      h('p', {}, `${count(records.length)} records in ${fileName}; ${count(problems.length)} with problems.`),
      first.map((record) => h('pre', {}, record)),
      problems.length > 0 &&
        h(
          'div',
          {},
          h('h3', {}, 'Problems found before sending'),
          table(
            'Problems',
            ['Record', 'Problem'],
            problems.slice(0, PAGE).map((p) => [String(p.position + 1), p.problem]),
          ),
        ),
    );
    dryRun.disabled = run.disabled = records.length === 0;
  };

  const load = async (chosen: File) => {
    if (chosen.size > MAX_FILE_BYTES) {
      show(
        preview,
        h(
          'p',
          { class: 'error' },
          `The file is over ${MAX_FILE_BYTES / 1024 / 1024} MB: import it with userctl import.`,
        ),
      );
      return;
    }
    fileName = chosen.name;
    text = await chosen.text();
    format.value = formatOf(chosen.name);
    mapping = {};
    renderMapping();
    read();
  };

  file.addEventListener('change', () => file.files?.[0] && void load(file.files[0]));
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const dropped = event.dataTransfer?.files[0];
    if (dropped) void load(dropped);
  });
  format.addEventListener('change', () => {
    renderMapping();
    read();
  });
  identifier.addEventListener('change', renderPreview);

  const send = async (dry: boolean) => {
    dryRun.disabled = run.disabled = true;
    progress.hidden = false;
    show(outcomes);
    const bar = h('progress', {
      max: Math.max(records.length, 1),
      value: 0,
      'aria-label': 'Import progress',
    });
    const counts = h('div', { class: 'counts', id: 'import-counts' });
    show(progress, h('h3', {}, dry ? 'Dry run' : 'Import'), bar, counts);
    const chunks: RequestChunk[] = [];
    for await (const chunk of requestChunks(
      (async function* () {
        yield* records;
      })(),
      { identifier: identifier.value, upsert: upsert.checked, dryRun: dry },
    ))
      chunks.push(chunk);
    const entry: StartedImport = { file: fileName, dryRun: dry, at: new Date().toISOString(), tasks: [] };
    try {
      const result = await sendImport(chunks, {
        onTask: (id) => {
          entry.tasks.push(id);
          if (entry.tasks.length === 1) started.add(entry);
          else sessionStorage.setItem(STARTED_KEY, JSON.stringify([entry, ...started.all().slice(1)]));
        },
        onProgress: (p) => {
          bar.value = p.applied;
          const box = (label: string, value: string) => h('div', {}, h('strong', {}, value), label);
          show(
            counts,
            box('records sent', count(p.sent)),
            box('applied', count(p.applied)),
            box('failed', count(p.failed)),
            box('records/s', count(Math.round(p.rate))),
            box('time left', p.secondsLeft === undefined ? '…' : `${Math.ceil(p.secondsLeft)} s`),
          );
        },
      });
      renderOutcomes(dry, result);
    } catch (err) {
      fail(err);
    } finally {
      dryRun.disabled = run.disabled = records.length === 0;
      void renderStarted();
    }
  };
  dryRun.addEventListener('click', () => void send(true));
  run.addEventListener('click', () => void send(false));

  /** The outcome of every record: counts, a table filtered by outcome and paged, the downloads. */
  const renderOutcomes = (dry: boolean, result: Outcome[]) => {
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
    show(
      outcomes,
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
    );
    render();
  };

  /** The imports started from this tab, and where they stand now. */
  const renderStarted = async () => {
    const entries = started.all();
    if (entries.length === 0) return show(previous);
    const rows = [];
    for (const entry of entries) {
      for (const id of entry.tasks) {
        let task: Task | undefined;
        try {
          task = await call<Task>('GET', `/_api/admin/users/import/${id}?details=false`);
        } catch {
          task = undefined;
        }
        rows.push([
          entry.file,
          entry.dryRun ? 'dry run' : 'import',
          h('code', {}, id),
          task ? stateOf(task) : 'gone',
          task?.summary
            ? Object.entries(task.summary)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')
            : task?.progress
              ? `${task.progress.processed} of ${task.progress.total}`
              : '',
        ]);
      }
    }
    show(
      previous,
      h('h3', {}, 'Imports started in this tab'),
      table('Imports started in this tab', ['File', 'Kind', 'Task', 'State', 'Progress or summary'], rows),
    );
  };

  show(
    main,
    h('h2', {}, 'Import'),
    h(
      'section',
      {},
      drop,
      h(
        'div',
        { class: 'row' },
        labelled('Format', format),
        labelled('Identifier', identifier),
        h('label', { class: 'check' }, upsert, 'Update users that exist (upsert)'),
      ),
    ),
    suggestions,
    mappingBox,
    preview,
    h('div', { class: 'row' }, dryRun, run),
    progress,
    outcomes,
    previous,
  );
  void renderStarted();
}

/** What a record's outcome says in words: its errors' reasons, or its warnings. */
function reasonOf(outcome: Outcome): string {
  if (outcome.errors?.length) return outcome.errors.map((e) => `${e.reason}: ${e.message}`).join('; ');
  if (outcome.problem) return outcome.problem;
  return (outcome.warnings ?? []).map((w) => w.message).join('; ');
}
