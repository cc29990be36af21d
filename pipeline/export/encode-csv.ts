import { type Options, stringify } from 'csv-stringify/sync';
import type { UserRecord } from './assemble-records.js';
import type { BatchText } from './encode-records.js';
import type { ExportField } from './pointers.js';
import { projectPointers } from './project-pointers.js';
import { CSV_RECORDS_AT_ONCE } from './stage-marks.js';

/**
 * Cells as docs/decisions.md encodes them: strings as is, numbers in plain decimal, booleans
 * `true`/`false`, missing or null empty, arrays and objects (empty ones too) as compact JSON;
 * RFC 4180 quoting (a carriage return is quoted too), `\n` line ends.
 */
const CSV_OPTIONS: Options = {
  record_delimiter: '\n',
  quote_record_delimiter: true, // a cell holding `\n` or `\r` is quoted
  cast: {
    boolean: (value) => (value ? 'true' : 'false'),
    number: plainDecimal,
    object: jsonCell,
  },
};

/**
 * An array or object as compact JSON. An empty list, which most users' second factors are, is
 * written without calling the serializer: three calls per user saved.
 */
function jsonCell(value: object): string {
  return Array.isArray(value) && value.length === 0 ? '[]' : JSON.stringify(value);
}

/** What a spreadsheet reads as the start of a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * With `csv.escape_formulas`: a string cell that a spreadsheet would run as a formula gets a
 * leading `'`, so it is shown as text. Numbers, booleans and JSON cells are left as they are.
 */
const ESCAPING_OPTIONS: Options = {
  ...CSV_OPTIONS,
  cast: { ...CSV_OPTIONS.cast, string: (value) => (FORMULA_START.test(value) ? `'${value}` : value) },
};

/** A number in plain decimal, never with an exponent: 1e21 -> "1000000000000000000000", 1.5e-7 -> "0.00000015". */
export function plainDecimal(value: number): string {
  const text = String(value);
  if (!text.includes('e')) return text;
  const [mantissa = '', exponent = '0'] = text.split('e');
  const sign = mantissa.startsWith('-') ? '-' : '';
  const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.');
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * How a CSV file is written: formula-like cells escaped or not; with its header row (the default),
 * or the rows only (the parts of a split export after the first).
 */
export interface CsvSettings {
  readonly escapeFormulas?: boolean;
  readonly withHeader?: boolean;
}

/** Rows (in arrays) -> CSV text, starting with the header row, which is written even for 0 users. */
export function csvRows(
  header: readonly string[],
  { escapeFormulas = false, withHeader = true }: CsvSettings = {},
): BatchText<unknown[]> {
  const options = escapeFormulas ? ESCAPING_OPTIONS : CSV_OPTIONS;
  let headerWritten = !withHeader;
  return {
    encode(rows) {
      const text = stringify(headerWritten ? rows : [header, ...rows], options);
      headerWritten = true;
      return text;
    },
    end() {
      if (headerWritten) return '';
      headerWritten = true;
      return stringify([header], options);
    },
  };
}

/** Records -> CSV text: each record's cells read by the fields' pointers (csvRows). */
export function csvText(fields: readonly ExportField[], settings: CsvSettings): BatchText<UserRecord> {
  const project = projectPointers(fields);
  const rows = csvRows(
    fields.map((f) => f.field_name),
    settings,
  );
  return {
    encode: (records) => rows.encode(project(records)),
    end: () => rows.end(),
    recordsAtOnce: CSV_RECORDS_AT_ONCE,
  };
}
