import { alignSearchTextIndex } from '../../pipeline/db/migrate.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { dropSchema, freshSchema, rawCopy } from './imports.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_search_wal';
const RECORDS = 50_000;

/**
 * The WAL an imported user costs where ClickHouse serves search (the trigram index dropped) beside
 * where Postgres serves it: the rows the import bench's records make (users, login ids, password,
 * roles), loaded by COPY into fresh schemas, the WAL position read before and after.
 */
export async function benchSearchWal(databaseUrl: string, log: (l: string) => void): Promise<BenchRow[]> {
  const withIndex = await walPerRecord(databaseUrl, 'postgres');
  const withClickHouse = await walPerRecord(databaseUrl, 'clickhouse');
  log(
    `WAL per imported user: ${Math.round(withIndex)} bytes with the trigram index, ${Math.round(withClickHouse)} without`,
  );
  return [
    row(
      'import.wal_bytes_per_record',
      withClickHouse,
      'bytes',
      'the same rows where Postgres serves search (trigram index)',
      withIndex,
      'as measured',
    ),
  ];
}

async function walPerRecord(databaseUrl: string, servedBy: 'clickhouse' | 'postgres'): Promise<number> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  try {
    await alignSearchTextIndex(pool, servedBy);
    const before = await walPosition(pool);
    await rawCopy(pool, RECORDS);
    const { rows } = await pool.query<{ bytes: string }>(
      'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS bytes',
      [before],
    );
    return Number(rows[0]?.bytes) / RECORDS;
  } finally {
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

async function walPosition(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  return rows[0]?.lsn as string;
}
