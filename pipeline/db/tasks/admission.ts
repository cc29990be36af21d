import type { TaskKind } from '../../../schemas/index.js';
import type { PoolClient, Queryable } from '../pool.js';
import { TASK_COLUMNS, type TaskRow } from './task-rows.js';

/**
 * A new task: its project, kind and settings, and the JSON text of its message (for an import,
 * the whole request with its secrets sealed: the bus, not the row, keeps the input).
 */
export interface NewTask {
  readonly id: string;
  readonly project: string;
  readonly kind: TaskKind;
  readonly message: string;
  readonly options: Record<string, unknown>;
  readonly total: number;
  readonly replayOf?: string;
  /** The client's key for this request: sent again, it names the task already created. */
  readonly idempotency?: IdempotencyKey;
  /** The request that asked for it, for the task's log lines. */
  readonly requestedBy?: RequestedBy;
}

/** The request that created a task: its X-Request-Id and the acting admin (the JWT's `sub`). */
export interface RequestedBy {
  readonly request_id?: string;
  readonly admin?: string;
}

/** An Idempotency-Key header and the digest of the request body it came with. */
export interface IdempotencyKey {
  readonly key: string;
  readonly digest: string;
}

/** A task row with the digest of the body its Idempotency-Key came with. */
export type KeyedTaskRow = TaskRow & { request_digest: string | null };

/** The project's task of this kind made for an Idempotency-Key, with its body's digest. */
export async function findKeyedTask(
  db: Queryable,
  project: string,
  kind: TaskKind,
  key: string,
): Promise<KeyedTaskRow | undefined> {
  const { rows } = await db.query<KeyedTaskRow>(
    `SELECT ${TASK_COLUMNS}, request_digest FROM tasks
      WHERE project_id = $1 AND kind = $2 AND idempotency_key = $3`,
    [project, kind, key],
  );
  return rows[0];
}

/**
 * Serializes the admission of the project's tasks of one kind until the transaction ends: two
 * requests cannot both pass a limit that only one of them fits.
 */
export async function lockAdmission(client: PoolClient, project: string, kind: TaskKind): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('admission:' || current_schema() || $1 || $2))`, [
    project,
    kind,
  ]);
}

/**
 * Records a new pending task and its message in the outbox, in one statement: a task never exists
 * without a message on its way (the relay publishes the outbox). With an idempotency key the
 * project's kind has seen, nothing is written and that key's task is returned, with the digest of
 * its body; undefined when neither happened.
 */
export async function insertTask(db: Queryable, task: NewTask): Promise<KeyedTaskRow | undefined> {
  const { rows } = await db.query<KeyedTaskRow>(
    `WITH task AS (
       INSERT INTO tasks (id, project_id, kind, options, progress_total, replay_of, idempotency_key,
                          request_digest, requested_by, requested_lsn)
       VALUES ($1, $2, $3, $5, $6, $7, $8, $10, $9, pg_current_wal_insert_lsn())
       ON CONFLICT (project_id, kind, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${TASK_COLUMNS}, request_digest),
     message AS (INSERT INTO task_outbox (task_id, kind, message) SELECT id, kind, $4 FROM task)
     SELECT * FROM task
     UNION ALL
     SELECT ${TASK_COLUMNS}, request_digest FROM tasks
      WHERE $8::text IS NOT NULL AND project_id = $2 AND kind = $3 AND idempotency_key = $8
        AND NOT EXISTS (SELECT 1 FROM task)`,
    [
      task.id,
      task.project,
      task.kind,
      task.message,
      task.options,
      task.total,
      task.replayOf ?? null,
      task.idempotency?.key ?? null,
      task.requestedBy ?? null,
      task.idempotency?.digest ?? null,
    ],
  );
  // Two requests with one key at once: the second's insert waited for the first's and did nothing,
  // and its statement's snapshot, taken before the first committed, cannot see the first's row.
  // A statement of its own can.
  return (
    rows[0] ?? (task.idempotency && (await findKeyedTask(db, task.project, task.kind, task.idempotency.key)))
  );
}

/** How many tasks of this kind the project has pending (locked against concurrent admission by the caller). */
export async function countPendingTasks(db: Queryable, project: string, kind: TaskKind): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tasks WHERE project_id = $1 AND kind = $2 AND status = 'pending'`,
    [project, kind],
  );
  return rows[0]?.n ?? 0;
}

/** Records of the project's pending imports not applied yet: the backlog of the import workers. */
export async function countPendingImportRecords(db: Queryable, project: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT coalesce(sum(progress_total - progress_processed), 0)::text AS n FROM tasks
      WHERE project_id = $1 AND kind = 'import' AND status = 'pending'`,
    [project],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * The primary's WAL position when the task was asked for (none: asked for before it was kept):
 * where its WAL was being inserted, past every commit before it. Not pg_current_wal_lsn(), the
 * position written out so far: an asynchronous commit's record may still wait in the WAL buffers.
 */
export async function requestedLsn(
  db: Queryable,
  task: { readonly id: string; readonly project_id: string },
): Promise<string | undefined> {
  const { rows } = await db.query<{ lsn: string | null }>(
    'SELECT requested_lsn::text AS lsn FROM tasks WHERE id = $1 AND project_id = $2',
    [task.id, task.project_id],
  );
  return rows[0]?.lsn ?? undefined;
}
