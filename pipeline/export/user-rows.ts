// The export's reading of Postgres: the snapshot of the users it keeps, and the rows of their
// records streamed by COPY (assemble-records.ts makes records of them).

import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import type { UserKey } from '../db/export-parts.js';
import type { PoolClient } from '../db/pool.js';
import { type AssemblyOptions, assembleRecords, type UserRecord } from './assemble-records.js';
import { COPY_BYTES_AHEAD } from './stage-marks.js';
import {
  TIME_TEXT_SETTINGS,
  type UserConditions,
  userConditionSql,
  userRecordsSql,
} from './user-records-sql.js';

/** The users an export keeps (none of its filters set: every user). */
export interface ExportFilters {
  /** RFC 3339: users created after it. */
  readonly created_after?: string;
  /** RFC 3339: users updated at or after it. */
  readonly updated_since?: string;
  readonly disabled?: boolean;
}

/** The pointers of the user's times: the records carry them only when a CSV column asks for one. */
export const TIME_POINTERS: readonly string[] = ['/created_at', '/updated_at', '/last_login_at'];

/** What the records of one export carry besides the spec's members, and which users they are. */
export interface SnapshotSettings {
  readonly filters?: ExportFilters | undefined;
  /** `created_at`, `updated_at` and `last_login_at` (TIME_POINTERS). */
  readonly times?: boolean;
  /** `password` and `mfa.password` (include_password_hashes). */
  readonly passwordHashes?: boolean;
  /**
   * The members the file reads (a CSV's fields point into them); without it, every member. The
   * statement reads only the related rows they are built from, and the assembly builds only them.
   */
  readonly members?: ReadonlySet<string> | undefined;
  /** One part of a split export: its users only (read under the coordinator's snapshot). */
  readonly part?: {
    readonly after: UserKey | undefined;
    readonly through: UserKey | undefined;
  };
  /** Only these users (the change feed's records), read under the caller's snapshot. */
  readonly users?: readonly string[];
}

/**
 * Prepares the export's snapshot transaction (withSnapshot; a part's runs under the coordinator's
 * snapshot). The project, the filters and the part's range become settings of the transaction,
 * which the records statement reads (COPY takes no parameters). The planner is kept to plans that
 * stream in user order: no hash or merge join, no full sort (which would read and sort every row
 * before the first one reaches the file, and spill to disk to do it; but with `updated_since`,
 * whose users the planner may find by their update time and sort), and no parallel workers (the
 * worker process assembling the records needs the other core more). JIT compilation is off: it
 * holds the first row back and makes the statement no faster.
 */
export async function prepareSnapshot(
  client: PoolClient,
  project: string,
  settings: SnapshotSettings = {},
): Promise<void> {
  const { filters = {}, part } = settings;
  await client.query(
    `SELECT set_config('export.project', $8, true),
            set_config('export.created_after', $1, true), set_config('export.updated_since', $2, true),
            set_config('export.disabled', $3, true), set_config('export.after_at', $4, true),
            set_config('export.after_id', $5, true), set_config('export.through_at', $6, true),
            set_config('export.through_id', $7, true), set_config('enable_hashjoin', 'off', true),
            set_config('enable_mergejoin', 'off', true), set_config('enable_sort', $9, true),
            set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true),
            ${TIME_TEXT_SETTINGS}`,
    [
      filters.created_after ?? '',
      filters.updated_since ?? '',
      filters.disabled?.toString() ?? '',
      part?.after?.at ?? '',
      part?.after?.id ?? '',
      part?.through?.at ?? '',
      part?.through?.id ?? '',
      project,
      // The users changed since a time are found by users_updated_at and sorted: the few of them,
      // not every user of the project in creation order.
      filters.updated_since === undefined ? 'off' : 'on',
    ],
  );
}

/** The users `settings` keep, as a condition on `users u` (the values: the transaction's settings). */
export function exportedUsersSql(settings: SnapshotSettings): string {
  return userConditionSql(userConditions(settings));
}

/** Which conditions on the users the settings set. */
function userConditions({ filters = {}, part, users }: SnapshotSettings): UserConditions {
  return {
    createdAfter: filters.created_after !== undefined,
    updatedSince: filters.updated_since !== undefined,
    disabled: filters.disabled !== undefined,
    after: part?.after !== undefined,
    through: part?.through !== undefined,
    users: users !== undefined,
  };
}

/** The records statement (user-records-sql.ts) that reads the users and members of `settings`. */
export function recordsStatement(settings: SnapshotSettings = {}): string {
  return userRecordsSql({
    conditions: userConditions(settings),
    times: settings.times === true,
    passwordHashes: settings.passwordHashes === true,
    members: settings.members,
  });
}

/**
 * Streams the rows every user's record is assembled from through `COPY (...) TO STDOUT`: the
 * fastest way out of Postgres, read up to COPY_BYTES_AHEAD ahead. Run it after prepareSnapshot,
 * on the same client.
 */
export function streamUserRows(client: PoolClient, settings: SnapshotSettings = {}): NodeJS.ReadableStream {
  return client.query(
    copyTo(`COPY (${recordsStatement(settings)}) TO STDOUT`, { highWaterMark: COPY_BYTES_AHEAD }),
  );
}

/**
 * The records of `users` (of `project`) as the ndjson export writes them, read under the
 * snapshot of `client`'s transaction; a user that does not exist there has none. The list is
 * short: each user is read by its key (no hash or merge join, which would read every user of the
 * project), and the rows are sorted.
 */
export async function readUserRecords(
  client: PoolClient,
  project: string,
  users: readonly string[],
  options: AssemblyOptions,
): Promise<Map<string, UserRecord>> {
  const records = new Map<string, UserRecord>();
  if (users.length === 0) return records;
  await client.query(
    `SELECT set_config('export.project', $1, true), set_config('export.users', $2, true),
            set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
            set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true),
            ${TIME_TEXT_SETTINGS}`,
    [project, users.join(',')],
  );
  await pipeline(
    streamUserRows(client, { users }),
    assembleRecords(options),
    async (batches: AsyncIterable<UserRecord[]>) => {
      for await (const batch of batches)
        for (const record of batch) records.set(record.sub as string, record);
    },
  );
  return records;
}
