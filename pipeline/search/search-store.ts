import { readFile } from 'node:fs/promises';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { ApiError } from '../errors.js';
import { chIdentifier, chString } from './clickhouse-sql.js';

const SQL_DIR = new URL('../../sql/clickhouse/', import.meta.url);

/** The live table's name, and the one `make search-reindex` fills before swapping it in. */
export const LIVE_TABLE = 'users_search';
export const REINDEX_TABLE = 'users_search_reindex';

/** The ClickHouse side of the search index: a client and its database. */
export interface SearchStore {
  readonly client: ClickHouseClient;
  readonly database: string;
  /** `database.name`, checked. */
  table(name: string): string;
  /** Creates the database and the table (with its n-gram index where the server has them) unless they exist. */
  createTable(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A client of the store; nothing is asked of the server until it is used. */
export function openSearchStore(settings: { url: string; database: string }): SearchStore {
  // Its faults reach the callers, which log them through the service's logger.
  const client = createClient({
    url: settings.url,
    request_timeout: 30_000,
    log: { level: ClickHouseLogLevel.OFF },
  });
  const database = chIdentifier(settings.database);
  const table = (name: string) => `${database}.${chIdentifier(name)}`;
  const ddl = async (file: string, name: string) =>
    (await readFile(new URL(file, SQL_DIR), 'utf8')).replaceAll('{table}', table(name));
  return {
    client,
    database,
    table,
    async createTable(name) {
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
      await client.command({ query: await ddl('users_search.sql', name) });
      if (await hasSkippingIndexes(client)) {
        await client.command({ query: await ddl('users_search_index.sql', name) });
      }
    },
    close: () => client.close(),
  };
}

/** Data skipping indexes are generally available from ClickHouse 20 on. */
async function hasSkippingIndexes(client: ClickHouseClient): Promise<boolean> {
  const rows = await (await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' })).json<{
    v: string;
  }>();
  return Number(rows[0]?.v.split('.')[0]) >= 20;
}

/** Removes a project's rows from the live table (a deleted project's; its users are gone). */
export async function purgeProjectSearchRows(store: SearchStore, projectId: string): Promise<void> {
  await store.createTable(LIVE_TABLE);
  await store.client.command({
    query: `ALTER TABLE ${store.table(LIVE_TABLE)} DELETE WHERE project_id = ${chString(projectId)}`,
  });
}

/** A fault of ClickHouse as the facade answers it: 503, retry later. */
export function searchIndexUnavailable(cause: unknown): ApiError {
  return new ApiError(
    'SearchIndexUnavailable',
    'the search index is unavailable; retry later',
    { dependency: 'search index' },
    { cause, headers: { 'Retry-After': '5' } },
  );
}
