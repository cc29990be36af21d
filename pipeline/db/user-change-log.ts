import type { Queryable } from './pool.js';

// The change log the triggers of sql/033_user_change_log.sql write, read below the commit
// watermark (docs/changes.md), its retention horizon, and how far each publisher has gone.

/**
 * A position in the log: a transaction id (xid8, decimal) and a user changed by it, and the
 * snapshot of an export whose transactions' rows are left out.
 */
export interface ChangePosition {
  readonly txid: string;
  readonly userId: string;
  readonly snapshot?: string;
}

/** One user changed by one transaction, as the log holds it. */
export interface ChangeRow {
  readonly project_id: string;
  readonly txid: string;
  readonly user_id: string;
  readonly kind: 'created' | 'updated' | 'deleted';
  readonly occurred_at: Date;
}

/** A page of the log, and where the log stood when it was read. */
export interface ChangeRows {
  readonly rows: ChangeRow[];
  /** Every transaction below this id had ended: no row below it can appear later. */
  readonly watermark: string;
  /** Retention has deleted rows of transactions up to this id. */
  readonly floor: string;
}

/**
 * Whose rows a read takes: one project's (the HTTP feed), those of a list of projects (a
 * publisher's: the projects it publishes; none for an empty list), or every project's (undefined).
 */
export type ChangeScope = string | readonly string[] | undefined;

/** The condition on `user_change_log l` that keeps the rows of `scope` ($1). */
function scopeSql(scope: ChangeScope): string {
  if (scope === undefined) return '$1::text IS NULL';
  return typeof scope === 'string' ? 'l.project_id = $1' : 'l.project_id = ANY ($1::text[])';
}

/**
 * The rows of `scope` after `after` and below the watermark, in position order, leaving out those
 * of transactions `after.snapshot` holds. Run in the snapshot the records are then read in: the
 * watermark is that snapshot's.
 */
export async function readChangeRows(
  db: Queryable,
  scope: ChangeScope,
  after: ChangePosition,
  limit: number,
): Promise<ChangeRows> {
  const { rows } = await db.query<ChangeRow & { watermark: string; floor: string }>(
    `WITH mark AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS watermark,
                          (SELECT floor FROM user_change_horizon) AS floor)
     SELECT m.watermark::text AS watermark, m.floor::text AS floor, l.project_id, l.txid::text AS txid,
            l.user_id, l.kind, l.occurred_at
       FROM mark m LEFT JOIN LATERAL (
         SELECT * FROM user_change_log l
          WHERE ${scopeSql(scope)}
            AND (l.txid, l.user_id) > ($2::xid8, $3::uuid) AND l.txid < m.watermark
            AND ($4::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(l.txid, $4::pg_snapshot))
          ORDER BY l.txid, l.user_id LIMIT $5) l ON true`,
    [scope ?? null, after.txid, after.userId, after.snapshot ?? null, limit],
  );
  const first = rows[0] as { watermark: string; floor: string };
  return {
    rows: rows.filter((r) => r.txid !== null),
    watermark: first.watermark,
    floor: first.floor,
  };
}

/** The current snapshot (pg_snapshot text): in a REPEATABLE READ transaction, the transaction's. */
export async function currentSnapshot(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot');
  return (rows[0] as { snapshot: string }).snapshot;
}

/** Rows deleted per statement of a sweep: each statement stays short. */
const SWEEP_BATCH = 10_000;

/**
 * Deletes rows older than `retentionSeconds` and raises the horizon past the transactions they
 * belonged to, in one statement per batch. Returns how many rows it deleted.
 */
export async function sweepChangeLog(db: Queryable, retentionSeconds: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM user_change_log WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM user_change_log
            WHERE occurred_at < statement_timestamp() - make_interval(secs => $1) LIMIT $2))
         RETURNING txid),
       top AS (SELECT max(txid) AS txid, count(*)::int AS n FROM gone),
       raised AS (
         UPDATE user_change_horizon SET floor = greatest(floor, (SELECT txid FROM top))
          WHERE (SELECT txid FROM top) IS NOT NULL)
       SELECT n FROM top`,
      [retentionSeconds, SWEEP_BATCH],
    );
    const n = rows[0]?.n ?? 0;
    deleted += n;
    if (n < SWEEP_BATCH) return deleted;
  }
}

/**
 * Leases the publication `name` to `owner` for `leaseSeconds` (renewing its own lease), and returns
 * where it stands; undefined while another owner holds it. A publication read for the first time
 * starts at the watermark: it publishes the changes committed from then on.
 */
export async function leasePublication(
  db: Queryable,
  name: string,
  owner: string,
  leaseSeconds: number,
): Promise<ChangePosition | undefined> {
  const { rows } = await db.query<{ txid: string; user_id: string }>(
    `WITH fresh AS (
       INSERT INTO user_change_publications (name, txid, user_id)
       VALUES ($1, pg_snapshot_xmin(pg_current_snapshot()), '00000000-0000-0000-0000-000000000000')
       ON CONFLICT (name) DO NOTHING)
     UPDATE user_change_publications
        SET owner = $2, lease_until = clock_timestamp() + make_interval(secs => $3)
      WHERE name = $1 AND (owner = $2 OR lease_until IS NULL OR lease_until < clock_timestamp())
      RETURNING txid::text AS txid, user_id`,
    [name, owner, leaseSeconds],
  );
  const row = rows[0];
  return row && { txid: row.txid, userId: row.user_id };
}

/**
 * Records that the publication `name` has published every event through `position`, while
 * `owner` still holds it: false when its lease was lost (another owner publishes now).
 */
export async function movePublication(
  db: Queryable,
  name: string,
  owner: string,
  position: ChangePosition,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE user_change_publications SET txid = $3::xid8, user_id = $4
      WHERE name = $1 AND owner = $2 AND lease_until > clock_timestamp()`,
    [name, owner, position.txid, position.userId],
  );
  return rowCount === 1;
}

/** The watermark now: every event of the feed so far is below it. */
export async function changeWatermark(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ watermark: string }>(
    'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS watermark',
  );
  return (rows[0] as { watermark: string }).watermark;
}
