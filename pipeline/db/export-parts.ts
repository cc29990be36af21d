import { LIVE_READERS_SQL, READERS_LOCK_SQL } from './export-readers.js';
import type { Pool, Queryable } from './pool.js';
import { withTransaction } from './transaction.js';

// The parts of a split export (sql/011_export_parts.sql): planned by the coordinator one at a time
// while the first are written, claimed and written by any worker, committed by the coordinator in
// part order. A plan is named by the blob its attempt writes.

/** A position in the users' keyset (created_at, id); the time as Postgres writes it, exactly. */
export interface UserKey {
  readonly at: string;
  readonly id: string;
}

/** A part as a worker claims it. */
export interface ExportPart {
  readonly task_id: string;
  readonly part: number;
  readonly blob_name: string;
  readonly snapshot: string;
  readonly after_at: string | null;
  readonly after_id: string | null;
  readonly through_at: string | null;
  readonly through_id: string | null;
  readonly attempt: number;
  /** The export task's options (format, fields, filters). */
  readonly options: Record<string, unknown>;
  /** The export task's project: the part reads only its users. */
  readonly project_id: string;
  /** The snapshot lives on the standby (DATABASE_READ_URL), not the primary. */
  readonly on_standby: boolean;
}

/** How far every part of a task has come. */
export interface PartState {
  readonly part: number;
  readonly processed: number;
  readonly block_ids: string[] | null;
  /** The bytes its staged blocks hold (a number: it may pass 2^53 only past any store's limit). */
  readonly bytes: number | null;
  readonly failure: string | null;
}

/** The next range of a plan: its users, and the key it ends at (none: the last range). */
export interface UserRange {
  readonly users: number;
  readonly through: UserKey | undefined;
}

/**
 * The range of up to `size` users (0: no bound) that follows `after` among those a statement keeps
 * (`condition` on `users u`): one walk of the users' creation-order index to the range's last user
 * and the one after it, nothing held or sorted; a range that is not full is counted by a second
 * walk over its users. Run it in the snapshot's transaction.
 */
export async function nextRange(
  db: Queryable,
  condition: string,
  size: number,
  after: UserKey | undefined,
): Promise<UserRange> {
  // The users after `after`, its key in the statement's parameters $first and $first + 1.
  const users = (first: number) => `FROM users u WHERE ${condition}
     ${after === undefined ? '' : `AND (u.created_at, u.id) > ($${first}::timestamptz, $${first + 1}::uuid)`}`;
  const bound = after === undefined ? [] : [after.at, after.id];
  if (size > 0) {
    const { rows } = await db.query<UserKey>(
      // The keys are made text after the walk: the rows it passes over are not converted.
      `SELECT r.created_at::text AS at, r.id::text AS id
         FROM (SELECT u.created_at, u.id ${users(2)} ORDER BY u.created_at, u.id OFFSET $1::int - 1 LIMIT 2) r`,
      [size, ...bound],
    );
    const end = rows[0];
    if (end !== undefined) return { users: size, through: rows.length > 1 ? end : undefined };
  }
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n ${users(1)}`, bound);
  return { users: rows[0]?.n ?? 0, through: undefined };
}

/**
 * Plans one part of one attempt at the task (its blob, and its attempt number, which fences it:
 * once another attempt owns the task, it can no longer be claimed, renewed or finished).
 */
export async function planPart(
  db: Queryable,
  plan: {
    taskId: string;
    blobName: string;
    snapshot: string;
    coordinator: string;
    taskAttempt: number;
    part: number;
    onStandby: boolean;
    after: UserKey | undefined;
    through: UserKey | undefined;
  },
): Promise<void> {
  const { after, through } = plan;
  await db.query(
    `INSERT INTO export_parts (task_id, part, blob_name, snapshot, coordinator, task_attempt,
                               after_at, after_id, through_at, through_id, on_standby)
     VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::uuid, $9::timestamptz, $10::uuid, $11)`,
    [
      plan.taskId,
      plan.part,
      plan.blobName,
      plan.snapshot,
      plan.coordinator,
      plan.taskAttempt,
      after?.at ?? null,
      after?.id ?? null,
      through?.at ?? null,
      through?.id ?? null,
      plan.onStandby,
    ],
  );
}

/**
 * Claims a part of the plan (its blob) for `worker` until the lease ends: the given one, or with
 * none the first that is not done and that nobody holds (never claimed, or its lease ran out: its
 * worker died or stalled). Each claim is a new attempt; the earlier attempt's work no longer
 * counts. Nothing is claimed once the task has ended, nor while `readersMax` readers of the whole
 * deployment are live (export-readers.ts).
 */
export async function claimPart(
  pool: Pool,
  claim: {
    blobName: string;
    part?: number;
    worker: string;
    leaseMs: number;
    readersMax: number;
    /** The claimer reads the standby too: it may take a part whose snapshot lives there. */
    standby: boolean;
  },
): Promise<ExportPart | undefined> {
  return withTransaction(pool, async (tx) => {
    await tx.query(READERS_LOCK_SQL);
    const { rows } = await tx.query<ExportPart>(
      `UPDATE export_parts p
          SET claimed_by = $3, lease_until = clock_timestamp() + $4 * interval '1 millisecond',
              attempt = p.attempt + 1, processed = 0
         FROM tasks t
        WHERE t.id = p.task_id AND t.status = 'pending' AND t.attempt = p.task_attempt
          AND ${LIVE_READERS_SQL} < $5
          AND (p.blob_name, p.part) = (
            SELECT blob_name, part FROM export_parts
             WHERE blob_name = $1 AND ($2::int IS NULL OR part = $2) AND block_ids IS NULL AND failure IS NULL
               AND (lease_until IS NULL OR lease_until < clock_timestamp()) AND ($6 OR NOT on_standby)
             ORDER BY part LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING p.task_id, p.part, p.blob_name, p.snapshot, p.after_at::text, p.after_id::text,
                  p.through_at::text, p.through_id::text, p.attempt, t.options, t.project_id, p.on_standby`,
      [claim.blobName, claim.part ?? null, claim.worker, claim.leaseMs, claim.readersMax, claim.standby],
    );
    return rows[0];
  });
}

type Attempt = Pick<ExportPart, 'blob_name' | 'part' | 'attempt'>;

/**
 * Renews the lease of a part being written and saves its progress. False when the attempt no
 * longer owns the part (its lease ran out and another took it, or the export ended): stop.
 */
export async function renewPart(db: Queryable, attempt: Attempt, processed: number, leaseMs: number) {
  const { rowCount } = await db.query(
    `UPDATE export_parts p SET lease_until = clock_timestamp() + $5 * interval '1 millisecond', processed = $4
       FROM tasks t
      WHERE t.id = p.task_id AND t.status = 'pending' AND t.attempt = p.task_attempt
        AND p.blob_name = $1 AND p.part = $2 AND p.attempt = $3 AND p.block_ids IS NULL`,
    [attempt.blob_name, attempt.part, attempt.attempt, processed, leaseMs],
  );
  return rowCount === 1;
}

/** Records a part's staged blocks: it is done. False when the attempt no longer owned the part. */
export async function finishPart(
  db: Queryable,
  attempt: Attempt,
  staged: { readonly blockIds: string[]; readonly processed: number; readonly bytes: number },
) {
  const { rowCount } = await db.query(
    `UPDATE export_parts SET block_ids = $4, processed = $5, bytes = $6, lease_until = NULL
      WHERE blob_name = $1 AND part = $2 AND attempt = $3 AND block_ids IS NULL`,
    [attempt.blob_name, attempt.part, attempt.attempt, staged.blockIds, staged.processed, staged.bytes],
  );
  return rowCount === 1;
}

/** Gives a part back (a fault that may pass): the next claim takes it at once. */
export async function releasePart(db: Queryable, attempt: Attempt): Promise<void> {
  await db.query(
    `UPDATE export_parts SET lease_until = NULL, claimed_by = NULL
      WHERE blob_name = $1 AND part = $2 AND attempt = $3 AND block_ids IS NULL`,
    [attempt.blob_name, attempt.part, attempt.attempt],
  );
}

/** Marks a part that cannot be written; the coordinator fails the export with `failure`. */
export async function failPart(db: Queryable, attempt: Attempt, failure: string): Promise<void> {
  await db.query(
    `UPDATE export_parts SET failure = $4, lease_until = NULL
      WHERE blob_name = $1 AND part = $2 AND attempt = $3 AND block_ids IS NULL`,
    [attempt.blob_name, attempt.part, attempt.attempt, failure],
  );
}

/** Every part of the plan, in order. */
export async function partStates(db: Queryable, blobName: string): Promise<PartState[]> {
  const { rows } = await db.query<PartState>(
    'SELECT part, processed, block_ids, bytes::float8 AS bytes, failure FROM export_parts WHERE blob_name = $1 ORDER BY part',
    [blobName],
  );
  return rows;
}

/** Forgets a plan's parts (its file is committed, or the attempt that planned them gave up). */
export async function deleteParts(db: Queryable, blobName: string): Promise<void> {
  await db.query('DELETE FROM export_parts WHERE blob_name = $1', [blobName]);
}
