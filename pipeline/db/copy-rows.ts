import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from './pool.js';

/**
 * A value of a COPY row: null or undefined is SQL NULL; objects and arrays are written as JSON.
 * A jsonb column whose value may be a bare string or number takes `JSON.stringify(value)`.
 */
export type CopyValue = string | number | boolean | null | undefined | object;

/**
 * Loads rows into `table` (its `columns`, in order) with one `COPY ... FROM STDIN`: the bulk path
 * of Postgres, with the table's constraints, indexes and triggers as for an INSERT. Runs in the
 * client's transaction; a constraint violation fails the whole COPY.
 */
export async function copyRows(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly CopyValue[])[],
): Promise<void> {
  if (rows.length === 0) return;
  let text = '';
  for (const row of rows) text += `${row.map(copyField).join('\t')}\n`;
  await pipeline(
    Readable.from([text]),
    client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)),
  );
}

// COPY's text format (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.2):
// tab-separated, `\N` for NULL, and a backslash, newline, carriage return or tab inside a value
// written as a backslash sequence. Written out here rather than with csv-stringify's CSV mode,
// which normalizes its options and casts field by field on every call: a fifth of the import
// worker's CPU in the bench, against a few percent for this.
const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One value in COPY's text format. */
export function copyField(value: CopyValue): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return SPECIAL.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c] as string) : text;
}
