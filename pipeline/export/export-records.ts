import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { to as copyTo } from 'pg-copy-streams';
import { decodeCopyField } from '../db/copy-text.js';
import type { PoolClient } from '../db/pool.js';
import { USER_FILTER_SQL, userRecordsSql } from './user-records-sql.js';

/** The users an export keeps (none of its filters set: every user). */
export interface ExportFilters {
  /** RFC 3339: users created after it. */
  readonly created_after?: string;
  /** RFC 3339: users updated at or after it. */
  readonly updated_since?: string;
  readonly disabled?: boolean;
}

/** The pointers of the user's times: the records carry them only when a CSV column asks for one. */
export const TIME_POINTERS: readonly string[] = ['/created_at', '/updated_at'];

/** An exported user's record: one compact JSON text, as the records statement writes it. */
export type RecordJson = string;

/**
 * Streams every user's record, one JSON text per line, through `COPY (...) TO STDOUT`: the
 * fastest way out of Postgres. Run it after prepareSnapshot, on the same client.
 */
export function streamUserRecords(client: PoolClient, filters: ExportFilters = {}): NodeJS.ReadableStream {
  const filtered = Object.values(filters).some((value) => value !== undefined);
  return client.query(copyTo(`COPY (${userRecordsSql({ filtered })}) TO STDOUT`));
}

/** What the records of one export carry besides the spec's members, and which users they are. */
export interface SnapshotSettings {
  readonly filters?: ExportFilters | undefined;
  /** `created_at` and `updated_at` (TIME_POINTERS). */
  readonly times?: boolean;
  /** `password` and `mfa.password` (include_password_hashes). */
  readonly passwordHashes?: boolean;
}

/**
 * Sets the per-transaction values the records statement reads (the TOTP issuer, the filters,
 * whether the records carry the user's times and password hashes), and counts the users it will write.
 */
export async function prepareSnapshot(
  client: PoolClient,
  totpIssuer: string,
  settings: SnapshotSettings = {},
): Promise<number> {
  const { filters = {}, times = false, passwordHashes = false } = settings;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  await client.query(
    `SELECT set_config('export.totp_issuer', $1, true), set_config('export.created_after', $2, true),
            set_config('export.updated_since', $3, true), set_config('export.disabled', $4, true),
            set_config('export.times', $5, true), set_config('export.password_hashes', $6, true)`,
    [
      totpIssuer,
      filters.created_after ?? '',
      filters.updated_since ?? '',
      filters.disabled?.toString() ?? '',
      times ? 'on' : '',
      passwordHashes ? 'on' : '',
    ],
  );
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM users u WHERE ${USER_FILTER_SQL}`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Arrays of records (about a hundred users each) a stage may hold before it stops reading: enough
 * to keep every stage busy, few enough that the worker's memory stays flat (issue goal: 200 MB).
 */
export const RECORD_ARRAYS_IN_FLIGHT = 2;

/**
 * COPY text rows -> the records' JSON texts, pushed as one array per chunk received, which keeps
 * the per-object cost of the streams low. COPY's text format escapes backslashes (and control
 * characters, which JSON text never holds raw), so each line is unescaped. The texts are compact
 * JSON (json_strip_nulls writes no spaces): ndjson writes them as they are, CSV parses them.
 */
export function copyLinesToJson(): Transform {
  const decoder = new StringDecoder('utf8'); // a character may straddle two chunks
  let rest = '';
  return new Transform({
    readableObjectMode: true,
    readableHighWaterMark: RECORD_ARRAYS_IN_FLIGHT,
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const text = rest + decoder.write(chunk);
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      if (lines.length > 0) this.push(lines.map(decodeCopyField));
      done();
    },
    flush(done: TransformCallback) {
      rest += decoder.end();
      if (rest !== '') this.push([decodeCopyField(rest)]);
      done();
    },
  });
}
