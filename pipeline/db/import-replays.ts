import type { LogOffsets } from '../../schemas/bus-message.js';
import type { PoolClient, Queryable } from './pool.js';

// Every statement on `import_replays`: a replay of the import log, its range and its progress.

/** A replay: what it reads and how far it got. */
export interface ReplayRow {
  readonly id: string;
  readonly end_offsets: LogOffsets;
  readonly next_offsets: LogOffsets;
  /** Tasks created so far, and their records. */
  readonly tasks: number;
  readonly records: number;
}

/** What names a replay: the same request started again is the same replay until it finishes. */
export interface ReplayKey {
  readonly bus: string;
  readonly from: string;
  readonly to: string | null;
  readonly upsert: boolean | null;
}

const COLUMNS = 'id, end_offsets, next_offsets, tasks, records';

/** The unfinished replay of this request, if one was interrupted. */
export async function findOpenReplay(db: Queryable, key: ReplayKey): Promise<ReplayRow | undefined> {
  const { rows } = await db.query<ReplayRow>(
    `SELECT ${COLUMNS} FROM import_replays
      WHERE bus = $1 AND from_position = $2 AND to_position IS NOT DISTINCT FROM $3
        AND upsert IS NOT DISTINCT FROM $4 AND finished_at IS NULL
      ORDER BY created_at DESC LIMIT 1`,
    [key.bus, key.from, key.to, key.upsert],
  );
  return rows[0];
}

/** Records a new replay of [from, end). */
export async function insertReplay(
  db: Queryable,
  id: string,
  key: ReplayKey,
  from: LogOffsets,
  end: LogOffsets,
): Promise<ReplayRow> {
  const { rows } = await db.query<ReplayRow>(
    `INSERT INTO import_replays (id, bus, from_position, to_position, upsert, end_offsets, next_offsets)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [id, key.bus, key.from, key.to, key.upsert, end, from],
  );
  return rows[0] as ReplayRow;
}

/** Locks the replay for the caller's transaction and returns where each partition stands. */
export async function lockReplay(client: PoolClient, id: string): Promise<LogOffsets> {
  const { rows } = await client.query<{ next_offsets: LogOffsets }>(
    'SELECT next_offsets FROM import_replays WHERE id = $1 FOR UPDATE',
    [id],
  );
  return rows[0]?.next_offsets ?? {};
}

/** Moves a partition past a message that made a task of `records` records. */
export async function advanceReplay(
  client: PoolClient,
  id: string,
  partition: string,
  next: string,
  records: number,
): Promise<void> {
  await client.query(
    `UPDATE import_replays SET next_offsets = jsonb_set(next_offsets, ARRAY[$2], to_jsonb($3::text)),
            tasks = tasks + 1, records = records + $4
      WHERE id = $1`,
    [id, partition, next, records],
  );
}

/** Marks a replay finished: the same request starts a new one. */
export async function finishReplay(db: Queryable, id: string): Promise<ReplayRow | undefined> {
  const { rows } = await db.query<ReplayRow>(
    `UPDATE import_replays SET finished_at = clock_timestamp() WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  return rows[0];
}
