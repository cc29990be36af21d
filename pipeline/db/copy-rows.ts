import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { type CopyValue, encodeCopyRow } from './copy-text.js';
import type { PoolClient } from './pool.js';

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
  for (const row of rows) text += encodeCopyRow(row);
  await pipeline(
    Readable.from([text]),
    client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)),
  );
}
