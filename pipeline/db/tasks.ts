import type { BusMessage } from '../../schemas/bus-message.js';
import type { TaskKind } from '../../schemas/index.js';
import { type ApiError, AttemptLost, envelopeError } from '../errors.js';
import type { PoolClient, Queryable } from './pool.js';

// Every statement on task rows and the task outbox. A task row is the single source of truth for
// its status; the bus carries what a worker needs to do the work.

/** A task row as the status endpoints read it. */
export interface TaskRow {
  readonly id: string;
  readonly kind: TaskKind;
  readonly status: 'pending' | 'completed';
  readonly created_at: Date;
  readonly completed_at: Date | null;
  readonly failed_at: Date | null;
  readonly error: Record<string, unknown> | null;
  readonly progress_processed: number;
  readonly progress_total: number;
  readonly summary: Record<string, number> | null;
  /** Export: the blob holding the file, once completed, with its size and SHA-256 (hex). */
  readonly file_name: string | null;
  readonly file_bytes: string | null;
  readonly file_sha256: string | null;
  /** Import: the task whose logged message this one was replayed from. */
  readonly replay_of: string | null;
}

const TASK_COLUMNS = `id, kind, status, created_at, completed_at, failed_at, error,
  progress_processed, progress_total, summary, file_name, file_bytes, file_sha256, replay_of`;

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
                          request_digest, requested_by)
       VALUES ($1, $2, $3, $5, $6, $7, $8, $10, $9)
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

/**
 * The project's task of this kind, if it exists and is not past retention (even before the sweeper
 * runs). Another project's task does not exist here.
 */
export async function findTask(
  db: Queryable,
  project: string,
  kind: TaskKind,
  id: string,
  retentionSeconds: number,
): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks
      WHERE id = $1 AND kind = $2 AND project_id = $3
        AND (status = 'pending' OR completed_at > clock_timestamp() - make_interval(secs => $4))`,
    [id, kind, project, retentionSeconds],
  );
  return rows[0];
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

/** Tasks kept, by kind and state: pending (not started), running, completed, failed. */
export async function countTasksByState(
  db: Queryable,
): Promise<{ kind: TaskKind; state: string; n: number }[]> {
  const { rows } = await db.query<{ kind: TaskKind; state: string; n: number }>(
    `SELECT kind, CASE WHEN failed_at IS NOT NULL THEN 'failed' WHEN status = 'completed' THEN 'completed'
                       WHEN started_at IS NULL THEN 'pending' ELSE 'running' END AS state,
            count(*)::int AS n
       FROM tasks GROUP BY 1, 2`,
  );
  return rows;
}

/** One attempt at a task, as its worker holds it: every write of the attempt names it. */
export interface TaskAttempt {
  readonly id: string;
  readonly attempt: number;
  readonly owner: string;
}

/** A task a worker has claimed: what it needs to run or resume it. */
export interface ClaimedTask extends TaskAttempt {
  readonly project_id: string;
  readonly options: Record<string, unknown>;
  /** Import: records already applied (the resume point). */
  readonly progress_processed: number;
  readonly requested_by: RequestedBy | null;
  /** Import: the first import of the request this one runs again (a replay). */
  readonly replay_of: string | null;
}

/**
 * Claims a pending task for `owner` until the lease ends: a new attempt, recorded. Undefined when
 * the task is gone, already completed (done, failed, cancelled or expired), or held by another
 * worker whose lease is running: a message delivered twice finds it taken. A lease that lapsed
 * is taken over by the upkeep, never here, so that its attempt is closed in one place.
 */
export async function claimTask(
  db: Queryable,
  kind: TaskKind,
  id: string,
  claim: { owner: string; leaseMs: number },
): Promise<ClaimedTask | undefined> {
  const { rows } = await db.query<ClaimedTask>(
    `WITH claimed AS (
       UPDATE tasks SET owner = $3, attempt = attempt + 1,
              lease_until = clock_timestamp() + $4 * interval '1 millisecond',
              started_at = coalesce(started_at, clock_timestamp()), heartbeat_at = clock_timestamp()
        WHERE id = $1 AND kind = $2 AND status = 'pending' AND owner IS NULL
        RETURNING id, attempt, owner, project_id, options, progress_processed, requested_by, replay_of),
     recorded AS (INSERT INTO task_attempts (task_id, attempt, owner) SELECT id, attempt, owner FROM claimed)
     SELECT * FROM claimed`,
    [id, kind, claim.owner, claim.leaseMs],
  );
  return rows[0];
}

/**
 * Renews the attempt's lease, with the export's progress when given. False when the attempt no
 * longer owns the task (it ended, was cancelled, or its lease lapsed and was taken over): the
 * worker stops. It never waits on the row: while an import batch holds it, the batch renews the
 * lease as it commits (saveImportProgress), and a renewal queued behind it would hold up the next.
 */
export async function renewLease(
  db: Queryable,
  attempt: TaskAttempt,
  leaseMs: number,
  processed?: number,
): Promise<boolean> {
  const { rows } = await db.query<{ ours: boolean }>(
    `WITH renewed AS (
       UPDATE tasks SET lease_until = clock_timestamp() + $4 * interval '1 millisecond',
              heartbeat_at = clock_timestamp(), progress_processed = coalesce($5, progress_processed)
        WHERE id = (SELECT id FROM tasks WHERE id = $1 FOR UPDATE SKIP LOCKED)
          AND status = 'pending' AND attempt = $2 AND owner = $3
        RETURNING id)
     SELECT EXISTS (SELECT 1 FROM renewed)
         OR EXISTS (SELECT 1 FROM tasks WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3)
       AS ours`,
    [attempt.id, attempt.attempt, attempt.owner, leaseMs, processed ?? null],
  );
  return rows[0]?.ours === true;
}

/**
 * Gives the task back (its worker is stopping): the attempt ends `released` and the task's message
 * is offered again at once, for another worker to go on from where this one stopped.
 */
export async function releaseTask(db: Queryable, attempt: TaskAttempt): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `WITH released AS (
       UPDATE tasks SET owner = NULL, lease_until = NULL
        WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3
        RETURNING id),
     closed AS (
       UPDATE task_attempts SET ended_at = clock_timestamp(), outcome = 'released'
        WHERE task_id = (SELECT id FROM released) AND attempt = $2),
     offered AS (UPDATE task_outbox SET published_at = NULL WHERE task_id = (SELECT id FROM released))
     SELECT id FROM released`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  return rows.length > 0;
}

/**
 * Frees the tasks whose lease lapsed (their worker died, or lost Postgres for a lease): each
 * attempt ends `lapsed` at its lease's end, and its message is offered again through the outbox,
 * unless the task has lapsed `maxLapses` times (it then ends TaskExpired at the next look). Rows
 * another transaction holds are skipped, not waited for: every process runs this.
 */
export async function offerLapsedTasks(db: Queryable, maxLapses: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH lapsed AS (
       SELECT id, attempt, lease_until FROM tasks
        WHERE status = 'pending' AND owner IS NOT NULL AND lease_until < clock_timestamp()
        FOR UPDATE SKIP LOCKED),
     freed AS (
       UPDATE tasks t SET owner = NULL, lease_until = NULL, lapses = t.lapses + 1
         FROM lapsed WHERE t.id = lapsed.id
       RETURNING t.id, t.lapses),
     closed AS (
       UPDATE task_attempts a SET ended_at = lapsed.lease_until, outcome = 'lapsed'
         FROM lapsed WHERE a.task_id = lapsed.id AND a.attempt = lapsed.attempt AND a.ended_at IS NULL),
     offered AS (
       UPDATE task_outbox o SET published_at = NULL
         FROM freed WHERE o.task_id = freed.id AND freed.lapses < $1)
     SELECT id FROM freed`,
    [maxLapses],
  );
  return rows.map((r) => r.id);
}

/** Sets the number of users an export will write. */
export async function setProgressTotal(db: Queryable, attempt: TaskAttempt, total: number): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE tasks SET progress_total = $4, progress_processed = 0
      WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3`,
    [attempt.id, attempt.attempt, attempt.owner, total],
  );
  if (rowCount !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}

/**
 * How many of the task's records are applied, for a pending task that this attempt owns; a task
 * that is gone or completed has nothing left to apply (Infinity). Throws AttemptLost when another
 * attempt owns it now (or nobody: it was released).
 */
function attemptProgress(
  row: { progress_processed: number; ours: boolean } | undefined,
  attempt: TaskAttempt,
): number {
  if (!row) return Number.POSITIVE_INFINITY;
  if (!row.ours) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
  return row.progress_processed;
}

/**
 * Locks the task row for the caller's transaction and returns how many import records are already
 * applied (attemptProgress): the fence of every batch's writes.
 */
export async function lockImportProgress(client: PoolClient, attempt: TaskAttempt): Promise<number> {
  const { rows } = await client.query<{ progress_processed: number; ours: boolean }>(
    `SELECT progress_processed, attempt = $2 AND owner IS NOT DISTINCT FROM $3 AS ours
       FROM tasks WHERE id = $1 AND status = 'pending' FOR UPDATE`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  return attemptProgress(rows[0], attempt);
}

/**
 * Holds the right to run a dry run of the task for the caller's transaction, and returns how many
 * of its records are already applied (attemptProgress: Infinity when the task ended, AttemptLost
 * when another attempt owns it). The right is
 * an advisory lock named by the task, not a lock of its row: a dry run holds it for its whole
 * request, and the row must stay free for the task's lease renewals and for the upkeep meanwhile.
 */
export async function holdDryRun(client: PoolClient, attempt: TaskAttempt): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [attempt.id]);
  const { rows } = await client.query<{ progress_processed: number; ours: boolean }>(
    `SELECT progress_processed, attempt = $2 AND owner IS NOT DISTINCT FROM $3 AS ours
       FROM tasks WHERE id = $1 AND status = 'pending'`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  return attemptProgress(rows[0], attempt);
}

/**
 * Moves the import's resume point, in the transaction that applied the records before it, and
 * renews the attempt's lease; AttemptLost (rolling the transaction back) when the attempt no longer
 * owns the task.
 */
export async function saveImportProgress(
  client: PoolClient,
  attempt: TaskAttempt,
  processed: number,
  leaseMs: number,
): Promise<void> {
  const { rowCount } = await client.query(
    `UPDATE tasks SET progress_processed = $4, heartbeat_at = clock_timestamp(),
            lease_until = clock_timestamp() + $5 * interval '1 millisecond'
      WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3`,
    [attempt.id, attempt.attempt, attempt.owner, processed, leaseMs],
  );
  if (rowCount !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}

/**
 * Completes an import with a summary counted from its details (each record once, and its
 * warnings); a dry run's also counts what would have been inserted, updated and skipped.
 */
export async function completeImport(db: Queryable, attempt: TaskAttempt): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE tasks t SET status = 'completed', completed_at = clock_timestamp(),
            summary = (SELECT jsonb_build_object(
                'total', count(*),
                'inserted', count(*) FILTER (WHERE outcome = 'inserted'),
                'updated', count(*) FILTER (WHERE outcome = 'updated'),
                'skipped', count(*) FILTER (WHERE outcome = 'skipped'),
                'failed', count(*) FILTER (WHERE outcome = 'failed'),
                'warnings', coalesce(sum(jsonb_array_length(warnings)), 0))
              || CASE WHEN (t.options->>'dry_run')::boolean THEN jsonb_build_object(
                'would_insert', count(*) FILTER (WHERE outcome = 'would_insert'),
                'would_update', count(*) FILTER (WHERE outcome = 'would_update'),
                'would_skip', count(*) FILTER (WHERE outcome = 'would_skip')) ELSE '{}' END
              FROM import_details d WHERE d.task_id = t.id)
      WHERE t.id = $1 AND t.status = 'pending' AND t.attempt = $2 AND t.owner = $3`,
    [attempt.id, attempt.attempt, attempt.owner],
  );
  if (rowCount !== 1) throw new AttemptLost(`task ${attempt.id} is no longer this attempt's`);
}

/**
 * Completes an export with the name of its committed file, and returns the file the task names
 * after the call: this one, or another's (null: none) when this attempt no longer owned the task
 * (it was cancelled, expired, or taken over).
 */
export async function completeExport(
  db: Queryable,
  attempt: TaskAttempt,
  fileName: string,
  file: { readonly bytes: number; readonly sha256: string },
): Promise<string | null> {
  const { rows } = await db.query<{ file_name: string | null }>(
    `WITH done AS (
       UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), file_name = $2,
              file_bytes = $3, file_sha256 = $4, progress_processed = progress_total
        WHERE id = $1 AND status = 'pending' AND attempt = $5 AND owner = $6
        RETURNING file_name)
     SELECT coalesce((SELECT file_name FROM done), (SELECT file_name FROM tasks WHERE id = $1)) AS file_name`,
    [attempt.id, fileName, file.bytes, file.sha256, attempt.attempt, attempt.owner],
  );
  return rows[0]?.file_name ?? null;
}

/** A task that ended failed: who it belonged to, to give back what it took. */
export interface FailedTask {
  readonly id: string;
  readonly kind: TaskKind;
  readonly project_id: string;
  /** Whether a worker had taken it: its work had begun. */
  readonly started: boolean;
}

/**
 * Completes a pending task that could not finish (docs/decisions.md: still `completed`, with
 * `failed_at` and the envelope error); a task completed meanwhile, or (given `attempt`) no longer
 * that attempt's, is left as it is (undefined).
 */
export async function failTask(
  db: Queryable,
  id: string,
  error: ApiError,
  attempt?: TaskAttempt,
): Promise<FailedTask | undefined> {
  const { rows } = await db.query<FailedTask>(
    `UPDATE tasks SET status = 'completed', completed_at = clock_timestamp(), failed_at = clock_timestamp(),
            error = $2
      WHERE id = $1 AND status = 'pending' AND ($3::int IS NULL OR (attempt = $3 AND owner = $4))
      RETURNING id, kind, project_id, started_at IS NOT NULL AS started`,
    [id, envelopeError(error), attempt?.attempt ?? null, attempt?.owner ?? null],
  );
  return rows[0];
}

/**
 * Fails the pending tasks that cannot finish: whose lease lapsed `maxLapses` times and that nobody
 * holds (`expired`), or exports started more than `exportLimitSeconds` ago (`timedOut`). A task
 * waiting on the bus, however long, is neither.
 */
export async function failAbandonedTasks(
  db: Queryable,
  limits: { maxLapses: number; exportLimitSeconds: number },
  errors: { expired: ApiError; timedOut: ApiError },
): Promise<FailedTask[]> {
  // A row another transaction holds (a worker's batch on a host that vanished) is skipped, not
  // waited for: every process runs this statement, and its relay of the outbox waits behind it.
  const { rows } = await db.query<FailedTask>(
    `WITH abandoned AS (
       SELECT id FROM tasks
        WHERE status = 'pending'
          AND ((lapses >= $1 AND owner IS NULL)
               OR (kind = 'export' AND started_at <= clock_timestamp() - make_interval(secs => $2)))
        FOR UPDATE SKIP LOCKED)
     UPDATE tasks t SET status = 'completed', completed_at = clock_timestamp(), failed_at = clock_timestamp(),
            error = CASE WHEN t.kind = 'export' AND t.started_at <= clock_timestamp() - make_interval(secs => $2)
                         THEN $4::jsonb ELSE $3::jsonb END
       FROM abandoned WHERE t.id = abandoned.id
     RETURNING t.id, t.kind, t.project_id, t.started_at IS NOT NULL AS started`,
    [
      limits.maxLapses,
      limits.exportLimitSeconds,
      envelopeError(errors.expired),
      envelopeError(errors.timedOut),
    ],
  );
  return rows;
}

/** A completed task past retention: its id and, for an export, the blob of its file. */
export interface ExpiredTask {
  readonly id: string;
  readonly file_name: string | null;
}

/** Completed tasks past retention, oldest first. */
export async function findTasksPastRetention(
  db: Queryable,
  retentionSeconds: number,
): Promise<ExpiredTask[]> {
  const { rows } = await db.query<ExpiredTask>(
    `SELECT id, file_name FROM tasks
      WHERE status = 'completed' AND completed_at <= clock_timestamp() - make_interval(secs => $1)
      ORDER BY completed_at LIMIT 1000`,
    [retentionSeconds],
  );
  return rows;
}

/**
 * Deletes tasks with their details and outbox rows (the import log keeps its messages). The
 * details go in the same statement: no foreign key takes them (sql/013). Only completed tasks
 * are deleted, and a completed import is never given more details.
 */
export async function deleteTasks(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM tasks WHERE id = ANY($1) RETURNING id)
     DELETE FROM import_details WHERE task_id IN (SELECT id FROM gone)`,
    [ids],
  );
}

/**
 * Takes up to `limit` unpublished messages of the outbox for the caller's transaction: marked
 * published once it commits (after publishing them), unpublished again if it rolls back. Rows
 * another relay holds are skipped. A message stays until its task ends (the trigger of sql/018),
 * to be offered again when a lease lapses; one offered again says so (`again`).
 */
export async function takeOutboxMessages(client: PoolClient, limit: number): Promise<BusMessage[]> {
  const { rows } = await client.query<{ task_id: string; kind: TaskKind; message: string; again: boolean }>(
    `UPDATE task_outbox o SET published_at = clock_timestamp()
       FROM tasks t
      WHERE t.id = o.task_id AND o.task_id IN (
        SELECT task_id FROM task_outbox WHERE published_at IS NULL
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING o.task_id, o.kind, o.message, t.attempt > 0 AS again`,
    [limit],
  );
  return rows.map((r) => ({ task_id: r.task_id, kind: r.kind, body: r.message, again: r.again }));
}
