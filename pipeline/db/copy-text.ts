// COPY's text format (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.2), both
// ways: tab-separated fields, `\N` for NULL, and a backslash, newline, carriage return or tab
// inside a value written as a backslash sequence. Written out here rather than with
// csv-stringify's CSV mode, which normalizes its options and casts field by field on every call:
// a fifth of the import worker's CPU in the bench, against a few percent for this.

/**
 * A value of a COPY row: null or undefined is SQL NULL; objects and arrays are written as JSON.
 * A jsonb column whose value may be a bare string or number takes `JSON.stringify(value)`.
 */
export type CopyValue = string | number | boolean | null | undefined | object;

const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One value in COPY's text format. */
export function encodeCopyField(value: CopyValue): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return SPECIAL.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c] as string) : text;
}

/** One row in COPY's text format, with its line end. */
export function encodeCopyRow(row: readonly CopyValue[]): string {
  return `${row.map(encodeCopyField).join('\t')}\n`;
}

const UNESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** The value of a one-column COPY text line (a line that is not `\N`). */
export function decodeCopyField(line: string): string {
  return line.includes('\\') ? line.replace(/\\(.)/g, (_m, c: string) => UNESCAPES[c] ?? c) : line;
}

/**
 * The first `count` values of a COPY text line, `\N` as null; the fields after them are not read
 * (a wide statement pads most of its rows with NULLs).
 */
export function decodeCopyFields(line: string, count: number): (string | null)[] {
  const fields: (string | null)[] = new Array(count);
  let start = 0;
  for (let n = 0; n < count; n++) {
    let end = line.indexOf('\t', start);
    if (end === -1) end = line.length;
    fields[n] =
      end - start === 2 && line.charCodeAt(start) === 92 && line.charCodeAt(start + 1) === 78
        ? null // \N
        : decodeCopyField(line.slice(start, end));
    start = end + 1;
  }
  return fields;
}
