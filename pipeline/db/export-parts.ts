import type { Queryable } from './pool.js';

// The parts of a split export (sql/011_export_parts.sql): planned by the coordinator, claimed and
// written by any worker, committed by the coordinator in part order. A plan is named by the blob
// its attempt writes.

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
}

/** How far every part of a task has come. */
export interface PartState {
  readonly part: number;
  readonly processed: number;
  readonly block_ids: string[] | null;
  readonly failure: string | null;
}

/**
 * The keys that cut the `total` users a statement keeps (`condition` on `users u`) into ranges of
 * `size`: the key of every size-th user, the last user's excepted. One pass over the users'
 * creation-order index, nothing held. Run it in the snapshot's transaction.
 */
export async function partBoundaries(
  db: Queryable,
  condition: string,
  size: number,
  total: number,
): Promise<UserKey[]> {
  const { rows } = await db.query<UserKey>(
    `SELECT at, id FROM (
       SELECT u.created_at::text AS at, u.id::text AS id, row_number() OVER (ORDER BY u.created_at, u.id) AS n
         FROM users u WHERE ${condition}) s
      WHERE n % $1 = 0 AND n < $2 ORDER BY n`,
    [size, total],
  );
  return rows;
}

/**
 * Plans the parts of one attempt at the task (its blob, and its attempt number, which fences them:
 * once another attempt owns the task, they can no longer be claimed, renewed or finished).
 */
export async function planParts(
  db: Queryable,
  plan: {
    taskId: string;
    blobName: string;
    snapshot: string;
    coordinator: string;
    taskAttempt: number;
    boundaries: UserKey[];
  },
): Promise<number> {
  const { taskId, blobName, snapshot, coordinator, taskAttempt, boundaries } = plan;
  const after = [null, ...boundaries];
  const through = [...boundaries, null];
  await db.query(
    `INSERT INTO export_parts (task_id, part, blob_name, snapshot, coordinator, task_attempt,
                               after_at, after_id, through_at, through_id)
     SELECT $1, r.n - 1, $2, $3, $4, $9, r.after_at::timestamptz, r.after_id::uuid, r.through_at::timestamptz, r.through_id::uuid
       FROM unnest($5::text[], $6::text[], $7::text[], $8::text[])
            WITH ORDINALITY AS r(after_at, after_id, through_at, through_id, n)`,
    [
      taskId,
      blobName,
      snapshot,
      coordinator,
      after.map((k) => k?.at ?? null),
      after.map((k) => k?.id ?? null),
      through.map((k) => k?.at ?? null),
      through.map((k) => k?.id ?? null),
      taskAttempt,
    ],
  );
  return after.length;
}

/**
 * Claims a part of the plan (its blob) for `worker` until the lease ends: the given one, or with
 * none the first that is not done and that nobody holds (never claimed, or its lease ran out: its
 * worker died or stalled). Each claim is a new attempt; the earlier attempt's work no longer
 * counts. Nothing is claimed once the task has ended.
 */
export async function claimPart(
  db: Queryable,
  claim: { blobName: string; part?: number; worker: string; leaseMs: number },
): Promise<ExportPart | undefined> {
  const { rows } = await db.query<ExportPart>(
    `UPDATE export_parts p
        SET claimed_by = $3, lease_until = clock_timestamp() + $4 * interval '1 millisecond',
            attempt = p.attempt + 1, processed = 0
       FROM tasks t
      WHERE t.id = p.task_id AND t.status = 'pending' AND t.attempt = p.task_attempt
        AND (p.blob_name, p.part) = (
          SELECT blob_name, part FROM export_parts
           WHERE blob_name = $1 AND ($2::int IS NULL OR part = $2) AND block_ids IS NULL AND failure IS NULL
             AND (lease_until IS NULL OR lease_until < clock_timestamp())
           ORDER BY part LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING p.task_id, p.part, p.blob_name, p.snapshot, p.after_at::text, p.after_id::text,
                p.through_at::text, p.through_id::text, p.attempt, t.options, t.project_id`,
    [claim.blobName, claim.part ?? null, claim.worker, claim.leaseMs],
  );
  return rows[0];
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
export async function finishPart(db: Queryable, attempt: Attempt, blockIds: string[], processed: number) {
  const { rowCount } = await db.query(
    `UPDATE export_parts SET block_ids = $4, processed = $5, lease_until = NULL
      WHERE blob_name = $1 AND part = $2 AND attempt = $3 AND block_ids IS NULL`,
    [attempt.blob_name, attempt.part, attempt.attempt, blockIds, processed],
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
    'SELECT part, processed, block_ids, failure FROM export_parts WHERE blob_name = $1 ORDER BY part',
    [blobName],
  );
  return rows;
}

/** Forgets a plan's parts (its file is committed, or the attempt that planned them gave up). */
export async function deleteParts(db: Queryable, blobName: string): Promise<void> {
  await db.query('DELETE FROM export_parts WHERE blob_name = $1', [blobName]);
}
