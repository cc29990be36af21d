import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool } from '../db/pool.js';
import { type SearchDocument, streamSearchDocuments } from '../db/search-documents.js';
import { chString } from './clickhouse-sql.js';
import { type SearchRow, searchRow } from './search-rows.js';
import { LIVE_TABLE, REINDEX_TABLE, type SearchStore } from './search-store.js';

const INSERT_ROWS = 20_000;

/**
 * `make search-reindex`: streams every user of the project into a fresh table and swaps it in for
 * the live one. The fresh table starts with the live rows of every other project, so a reindex of
 * one project touches only its rows. While it runs the sink writes each change into both tables, so
 * nothing written meanwhile is missed; queries read the live table throughout. Returns the number of
 * users indexed.
 */
export async function reindexSearch(pool: Pool, store: SearchStore, projectId: string): Promise<number> {
  const { client } = store;
  await client.command({ query: `DROP TABLE IF EXISTS ${store.table(REINDEX_TABLE)}` });
  await store.createTable(REINDEX_TABLE);
  await store.createTable(LIVE_TABLE);
  await client.command({
    query: `INSERT INTO ${store.table(REINDEX_TABLE)} SELECT * FROM ${store.table(LIVE_TABLE)} WHERE project_id != ${chString(projectId)}`,
  });
  let rows: SearchRow[] = [];
  let count = 0;
  const flush = async () => {
    if (rows.length === 0) return;
    await client.insert({ table: store.table(REINDEX_TABLE), values: rows, format: 'JSONEachRow' });
    count += rows.length;
    rows = [];
  };
  const db = await pool.connect();
  try {
    await pipeline(
      streamSearchDocuments(db, projectId),
      new Writable({
        objectMode: true,
        highWaterMark: 1000,
        write(doc: SearchDocument, _enc, done) {
          rows.push(searchRow(projectId, doc));
          if (rows.length < INSERT_ROWS) return done();
          flush().then(() => done(), done);
        },
        final(done) {
          flush().then(() => done(), done);
        },
      }),
    );
  } finally {
    db.release();
  }
  const retired = store.table(`${LIVE_TABLE}_retired`);
  await client.command({ query: `DROP TABLE IF EXISTS ${retired}` });
  await client.command({
    query: `RENAME TABLE ${store.table(LIVE_TABLE)} TO ${retired}, ${store.table(REINDEX_TABLE)} TO ${store.table(LIVE_TABLE)}`,
  });
  await client.command({ query: `DROP TABLE ${retired}` });
  return count;
}
