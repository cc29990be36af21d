import { csvRecord } from './csv-record.js';

// How a file's text becomes records, shared by `userctl import` (which streams the file) and the
// console (which reads it in the browser): the formats, the CSV options, the column mapping and
// the reading of one record. Nothing here touches Node or the DOM.

/** The kinds of file an import reads. */
export type RecordFormat = 'ndjson' | 'json' | 'csv';

/** One record of the file, at its position (zero-based, in file order), or why it cannot be sent. */
export type FileRecord =
  | {
      readonly position: number;
      readonly record: Record<string, unknown>;
      /** Members of another system's user that have no place in a record (`--from`). */
      readonly unmapped?: readonly string[];
      /** The members another system's user carried (`--from`), for the import's plan. */
      readonly source?: readonly string[];
    }
  | { readonly position: number; readonly problem: string }
  | {
      readonly position: number;
      /** Another user of the file this one is merged into (Cognito's social users), not sent. */
      readonly mergedInto: number;
      readonly source?: readonly string[];
    };

/** The format of a file by its name: `.csv`, `.json` (an array), anything else ndjson. */
export function formatOf(file: string): RecordFormat {
  if (/\.csv$/i.test(file)) return 'csv';
  if (/\.json$/i.test(file)) return 'json';
  return 'ndjson';
}

/** How csv-parse reads an import CSV: a header row, a BOM dropped, blank lines skipped. */
export const CSV_OPTIONS = {
  columns: true,
  bom: true,
  skip_empty_lines: true,
  relax_column_count: false,
} as const;

/** CSV header -> record member (`address.locality`, `custom_attributes.tier`); `''` leaves a column out. */
export type ColumnMapping = Readonly<Record<string, string>>;

/** The mapping `userctl` uses: each column is the member its header names. */
export function defaultMapping(header: readonly string[]): ColumnMapping {
  return Object.fromEntries(header.map((column) => [column, column]));
}

/** A CSV row's record under a mapping (csvRecord), or its problem. */
export function csvFileRecord(
  position: number,
  row: Readonly<Record<string, string>>,
  mapping?: ColumnMapping,
): FileRecord {
  const named = mapping
    ? Object.fromEntries(
        Object.entries(row).flatMap(([column, cell]) => (mapping[column] ? [[mapping[column], cell]] : [])),
      )
    : row;
  const read = csvRecord(named);
  return 'record' in read ? { position, record: read.record } : { position, problem: read.problem };
}

/** A JSON value's record (an ndjson line, an element of an array), or why it is not one. */
export function jsonFileRecord(position: number, read: () => unknown): FileRecord {
  let value: unknown;
  try {
    value = read();
  } catch (err) {
    return { position, problem: `not JSON: ${(err as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { position, problem: 'a record must be a JSON object' };
  }
  return { position, record: value as Record<string, unknown> };
}

/**
 * The records of a whole file's text: ndjson lines (blank lines skipped), the elements of a JSON
 * array, or CSV rows (read by `csvRows` with CSV_OPTIONS) under `mapping`. Throws for a JSON file
 * that is not an array, or a CSV file without a header row.
 */
export function textFileRecords(
  text: string,
  format: RecordFormat,
  csvRows: (text: string) => Record<string, string>[],
  mapping?: ColumnMapping,
): FileRecord[] {
  if (format === 'csv') return csvRows(text).map((row, position) => csvFileRecord(position, row, mapping));
  if (format === 'json') {
    const values: unknown = JSON.parse(text);
    if (!Array.isArray(values)) throw new Error('the file is not a JSON array of records');
    return values.map((value, position) => jsonFileRecord(position, () => value));
  }
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line, position) => jsonFileRecord(position, () => JSON.parse(line)));
}
