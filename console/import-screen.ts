import { parse } from 'csv-parse/browser/esm/sync';
import { email, phone_number, preferred_username } from 'record-validators';
import {
  type ColumnMapping,
  CSV_OPTIONS,
  defaultMapping,
  type FileRecord,
  formatOf,
  type RecordFormat,
  textFileRecords,
} from '../records/file-records.js';
import { foreignTextRecords } from '../records/from/convert-users.js';
import { FOREIGN_SYSTEMS, type ForeignSystem } from '../records/from/foreign-record.js';
import { type RequestChunk, requestChunks } from '../records/request-chunks.js';
import { importRecordSchema } from '../schemas/import-record.schema.js';
import { count, h, labelled, show, table } from './dom.js';
import { outcomesView } from './import-outcomes.js';
import { causeInWords } from './reason-words.js';
import { sendFileImport } from './send-file-import.js';
import { sendImport } from './send-import.js';
import { startedImports, startedImportsView } from './started-imports.js';

/**
 * The largest file the console reads in the tab; a larger one is written to an upload and imported
 * by the service as one task (send-file-import.ts), previewed from its first PREVIEW_BYTES.
 */
const MAX_FILE_BYTES = 100 * 1024 * 1024;
const PREVIEW_BYTES = 1024 * 1024;
/** Records shown in the preview, and problems listed before sending. */
const PREVIEW = 5;
const PROBLEMS_SHOWN = 50;

const csvRows = (text: string, columns?: readonly string[]) =>
  parse(text, { ...CSV_OPTIONS, ...(columns ? { columns: [...columns] } : {}) }) as Record<string, string>[];
const csvHeader = (text: string) =>
  ((parse(text, { bom: true, to_line: 1 }) as string[][])[0] ?? []).map(String);

/** The systems whose own user files the console converts, as their users know them. */
const SOURCE_NAMES: Readonly<Record<ForeignSystem, string>> = {
  auth0: 'Auth0 (user export or bulk-import file)',
  firebase: 'Firebase (auth:export)',
  cognito: 'Cognito (list-users JSON or user CSV)',
  keycloak: 'Keycloak (realm or users export)',
  clerk: 'Clerk (users CSV)',
};

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
  /** A file over MAX_FILE_BYTES: only its first lines are in `text`; the service reads the rest. */
  let whole: File | undefined;
  let mapping: Record<string, string> = {};
  let records: FileRecord[] = [];

  const file = h('input', { type: 'file', id: 'import-file', accept: '.ndjson,.jsonl,.json,.csv,.txt' });
  const drop = h(
    'div',
    { class: 'drop', id: 'import-drop' },
    h('label', { for: 'import-file' }, 'Drop a file here, or pick one: '),
    file,
  );
  const source = h(
    'select',
    { id: 'import-source' },
    h('option', { value: '' }, 'Records of this service'),
    FOREIGN_SYSTEMS.map((system) => h('option', { value: system }, SOURCE_NAMES[system])),
  );
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
      const system = source.value as ForeignSystem | '';
      // The first megabyte of a large JSON array is no document of its own: the service reads it.
      records =
        text === '' || (whole && chosen === 'json')
          ? []
          : system
            ? foreignTextRecords(text, chosen, system, csvRows)
            : textFileRecords(
                text,
                chosen,
                csvRows,
                chosen === 'csv' ? (mapping as ColumnMapping) : undefined,
              );
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
    // Another system's columns are its own: the conversion maps them.
    mappingBox.hidden = format.value !== 'csv' || text === '' || source.value !== '';
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

  /** The CSV column mapped to a record member (its first part: `address` for `address.locality`). */
  const columnOf = (member: string) =>
    source.value === '' && format.value === 'csv'
      ? Object.keys(mapping).find((column) => mapping[column]?.split('.')[0] === member)
      : undefined;

  /** The first records as sent, and every record's problem: the file's own, or the schema's. */
  const renderPreview = () => {
    const validate = RECORD_VALIDATORS[identifier.value as keyof typeof RECORD_VALIDATORS];
    const problems: { position: number; problem: string }[] = [];
    let merged = 0;
    for (const item of records) {
      if ('problem' in item) problems.push(item);
      else if ('mergedInto' in item) merged++;
      else if (!validate(item.record))
        problems.push({
          position: item.position,
          problem: (validate.errors ?? [])
            .map((e) =>
              causeInWords(
                { location: e.instancePath, kind: e.keyword, details: { ...e.params, message: e.message } },
                columnOf,
              ),
            )
            .join('; '),
        });
    }
    const first = records
      .slice(0, PREVIEW)
      .map((r) =>
        'record' in r
          ? JSON.stringify(r.record, null, 2)
          : 'problem' in r
            ? `(record ${r.position + 1}: ${r.problem})`
            : `(record ${r.position + 1}: merged into record ${r.mergedInto + 1})`,
      );
    const dropped = records.filter((r) => 'unmapped' in r && r.unmapped).length;
    show(
      preview,
      h('h3', {}, 'Preview'),
      h(
        'p',
        {},
        (whole
          ? `${fileName} is ${count(Math.round(whole.size / 1024 / 1024))} MB: the service imports it as one task; ` +
            `its first ${count(records.length)} records here, ${count(problems.length)} with problems`
          : `${count(records.length)} records in ${fileName}; ${count(problems.length)} with problems`) +
          (merged > 0 ? `; ${count(merged)} merged into the user of their email` : '') +
          (dropped > 0
            ? `; ${count(dropped)} with members of the source left out (userctl import --plan names them)`
            : '') +
          '.',
      ),
      first.map((record) => h('pre', {}, record)),
      problems.length > 0 &&
        h(
          'div',
          {},
          h('h3', {}, 'Problems found before sending'),
          table(
            'Problems',
            ['Record', 'Problem'],
            problems.slice(0, PROBLEMS_SHOWN).map((p) => [String(p.position + 1), p.problem]),
          ),
        ),
    );
    dryRun.disabled = run.disabled = records.length === 0 && !whole;
  };

  const load = async (chosen: File) => {
    whole = chosen.size > MAX_FILE_BYTES ? chosen : undefined;
    fileName = chosen.name;
    if (whole) {
      // Its first complete lines, for the preview and a CSV's header.
      const head = await chosen.slice(0, PREVIEW_BYTES).text();
      text = head.slice(0, head.lastIndexOf('\n') + 1);
    } else text = await chosen.text();
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
  source.addEventListener('change', () => {
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
    if (whole) {
      await sendWhole(whole, dry, bar, counts);
      return;
    }
    const chunks: RequestChunk[] = [];
    for await (const chunk of requestChunks(
      (async function* () {
        yield* records;
      })(),
      { identifier: identifier.value, upsert: upsert.checked, dryRun: dry },
    ))
      chunks.push(chunk);
    const entry = startedImports.begin(fileName, dry);
    try {
      const result = await sendImport(chunks, dry, {
        onTask: (id) => startedImports.taskStarted(entry, id),
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
      show(outcomes, ...outcomesView(dry, result, fileName));
    } catch (err) {
      fail(err);
    } finally {
      dryRun.disabled = run.disabled = records.length === 0;
      void startedImportsView().then((view) => show(previous, view));
    }
  };
  /** A file over the in-tab limit: uploaded, and imported by the service as one task. */
  const sendWhole = async (chosen: File, dry: boolean, bar: HTMLProgressElement, counts: HTMLElement) => {
    const system = source.value;
    const request = {
      identifier: identifier.value,
      upsert: upsert.checked,
      ...(dry ? { dry_run: true } : {}),
      format: format.value,
      ...(format.value === 'csv' && !system ? { csv: { columns: mapping } } : {}),
      ...(system ? { from: { system } } : {}),
    };
    const entry = startedImports.begin(fileName, dry);
    try {
      const result = await sendFileImport(chosen, request, {
        onTask: (id) => startedImports.taskStarted(entry, id),
        onProgress: (p) => {
          bar.max = Math.max(p.total, 1);
          bar.value = p.done;
          const unit = p.phase === 'applying' ? 'records' : 'bytes';
          show(
            counts,
            h('div', {}, h('strong', {}, `${count(p.done)} of ${count(p.total)} ${unit}`), p.phase),
          );
        },
      });
      show(outcomes, ...outcomesView(dry, result, fileName));
    } catch (err) {
      fail(err);
    } finally {
      dryRun.disabled = run.disabled = false;
      void startedImportsView().then((view) => show(previous, view));
    }
  };

  dryRun.addEventListener('click', () => void send(true));
  run.addEventListener('click', () => void send(false));

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
        labelled('Source', source),
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
  void startedImportsView().then((view) => show(previous, view));
}
