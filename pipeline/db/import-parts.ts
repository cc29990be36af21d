import { AttemptLost } from '../errors.js';
import type { PoolClient, Queryable } from './pool.js';

// The statements on import_file_parts (sql/032): the parts of a file import, each leased by one
// worker at a time and applied through `applied_through`, fenced by the lease's attempt.

/** A part as a worker holds it. */
export interface ImportPart {
  readonly project_id: string;
  readonly task_id: string;
  readonly part: number;
  readonly upload_id: string;
  /** The index in the file after the part's last applied record: where it goes on. */
  readonly applied_through: number;
  readonly worker: string;
  readonly attempt: number;
}

/** How far every part of a task has come. */
export interface ImportPartState {
  readonly part: number;
  readonly applied: number;
  readonly done: boolean;
  readonly failure: string | null;
}

const PART_COLUMNS = `project_id, task_id, part, upload_id, applied_through::float8 AS applied_through,
  worker, attempt`;

/** Records the task's parts, once (a coordinator that starts again finds them with their progress). */
export async function planImportParts(
  db: Queryable,
  task: { readonly project_id: string; readonly id: string },
  uploadId: string,
  parts: number,
): Promise<void> {
  await db.query(
    `INSERT INTO import_file_parts (project_id, task_id, part, upload_id)
     SELECT $1, $2, p, $3 FROM generate_series(0, $4 - 1) AS p
     ON CONFLICT DO NOTHING`,
    [task.project_id, task.id, uploadId, parts],
  );
}

/**
 * Leases a part of the task that is not done and that no live lease holds (`part`: that one
 * only), for `worker`, with a new attempt; undefined when there is none.
 */
export async function claimImportPart(
  db: Queryable,
  task: { readonly project_id: string; readonly id: string },
  claim: { readonly worker: string; readonly leaseMs: number; readonly part?: number },
): Promise<ImportPart | undefined> {
  const { rows } = await db.query<ImportPart>(
    `UPDATE import_file_parts p
        SET worker = $3, attempt = p.attempt + 1,
            lease_until = clock_timestamp() + $4 * interval '1 millisecond'
      WHERE (p.project_id, p.task_id, p.part) = (
        SELECT project_id, task_id, part FROM import_file_parts
         WHERE project_id = $1 AND task_id = $2 AND NOT done AND failure IS NULL
           AND (lease_until IS NULL OR lease_until < clock_timestamp())
           AND ($5::integer IS NULL OR part = $5)
         ORDER BY part LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${PART_COLUMNS}`,
    [task.project_id, task.id, claim.worker, claim.leaseMs, claim.part ?? null],
  );
  return rows[0];
}

/** Renews the part's lease; false when the part is no longer this attempt's, or its task ended. */
export async function renewImportPart(db: Queryable, part: ImportPart, leaseMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE import_file_parts p SET lease_until = clock_timestamp() + $6 * interval '1 millisecond'
      WHERE project_id = $1 AND task_id = $2 AND part = $3 AND worker = $4 AND attempt = $5 AND NOT done
        AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = p.task_id AND t.status = 'pending')`,
    [part.project_id, part.task_id, part.part, part.worker, part.attempt, leaseMs],
  );
  return rowCount === 1;
}

/**
 * Locks the part's row for the caller's transaction and returns where it goes on; AttemptLost when
 * another attempt holds the part now, or its task ended (the fence of every batch a part applies).
 */
export async function lockImportPart(client: PoolClient, part: ImportPart): Promise<number> {
  const { rows } = await client.query<{ applied_through: number; ours: boolean }>(
    `SELECT p.applied_through::float8 AS applied_through,
            p.worker = $4 AND p.attempt = $5 AND NOT p.done AND t.status = 'pending' AS ours
       FROM import_file_parts p JOIN tasks t ON t.id = p.task_id
      WHERE p.project_id = $1 AND p.task_id = $2 AND p.part = $3 FOR UPDATE OF p`,
    [part.project_id, part.task_id, part.part, part.worker, part.attempt],
  );
  const row = rows[0];
  if (!row?.ours) throw new AttemptLost(`part ${part.part} of ${part.task_id} is no longer this attempt's`);
  return row.applied_through;
}

/** Moves the part past records it just applied (`applied` of them), in their transaction. */
export async function advanceImportPart(
  client: PoolClient,
  part: ImportPart,
  through: number,
  applied: number,
  leaseMs: number,
): Promise<void> {
  await client.query(
    `UPDATE import_file_parts SET applied_through = $4, applied = applied + $5,
            lease_until = clock_timestamp() + $6 * interval '1 millisecond'
      WHERE project_id = $1 AND task_id = $2 AND part = $3`,
    [part.project_id, part.task_id, part.part, through, applied, leaseMs],
  );
}

/** Marks the part applied whole (if still this attempt's). */
export async function finishImportPart(db: Queryable, part: ImportPart): Promise<void> {
  await db.query(
    `UPDATE import_file_parts SET done = true, lease_until = NULL
      WHERE project_id = $1 AND task_id = $2 AND part = $3 AND worker = $4 AND attempt = $5`,
    [part.project_id, part.task_id, part.part, part.worker, part.attempt],
  );
}

/** Gives the part back at once (a drain, a fault that may pass): the next claim goes on from it. */
export async function releaseImportPart(db: Queryable, part: ImportPart): Promise<void> {
  await db.query(
    `UPDATE import_file_parts SET lease_until = NULL
      WHERE project_id = $1 AND task_id = $2 AND part = $3 AND worker = $4 AND attempt = $5`,
    [part.project_id, part.task_id, part.part, part.worker, part.attempt],
  );
}

/** Marks the part failed (a fault that will not pass): the task ends failed. */
export async function failImportPart(db: Queryable, part: ImportPart, failure: string): Promise<void> {
  await db.query(
    `UPDATE import_file_parts SET failure = $6, lease_until = NULL
      WHERE project_id = $1 AND task_id = $2 AND part = $3 AND worker = $4 AND attempt = $5`,
    [part.project_id, part.task_id, part.part, part.worker, part.attempt, failure],
  );
}

/** Every part of the task, in order. */
export async function importPartStates(
  db: Queryable,
  task: { readonly project_id: string; readonly id: string },
): Promise<ImportPartState[]> {
  const { rows } = await db.query<ImportPartState>(
    `SELECT part, applied::float8 AS applied, done, failure FROM import_file_parts
      WHERE project_id = $1 AND task_id = $2 ORDER BY part`,
    [task.project_id, task.id],
  );
  return rows;
}
