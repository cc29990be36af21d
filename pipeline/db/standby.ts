import type { Queryable } from './pool.js';

// A hot standby the exports may read (DATABASE_READ_URL): how far its replay has come.

/** Where a standby stands against a position of its primary's WAL. */
export type StandbyReplay = 'replayed' | 'behind' | 'not a standby';

/**
 * Whether the server behind `db` has replayed the WAL up to `lsn` (a position of its primary's
 * WAL, as pg_current_wal_insert_lsn() gave it there). A server that is not in recovery (promoted, or a
 * primary named by mistake) follows no primary: its data says nothing of `lsn`.
 */
export async function standbyReplay(db: Queryable, lsn: string): Promise<StandbyReplay> {
  const { rows } = await db.query<{ recovering: boolean; replayed: boolean | null }>(
    'SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn() >= $1::pg_lsn AS replayed',
    [lsn],
  );
  const row = rows[0];
  if (!row?.recovering) return 'not a standby';
  return row.replayed === true ? 'replayed' : 'behind';
}
