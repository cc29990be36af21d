import type { TaskKind } from '../../../schemas/index.js';
import type { Queryable } from '../pool.js';
import type { RequestedBy } from './admission.js';

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
 * is taken over by the upkeep, never here, so that its attempt is closed in one place. The
 * project's last claim is recorded with it (the embedded queue's fair order, db/task-queue.ts).
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
     recorded AS (INSERT INTO task_attempts (task_id, attempt, owner) SELECT id, attempt, owner FROM claimed),
     served AS (
       INSERT INTO project_claims (project_id, kind, claimed_at)
       SELECT project_id, $2, clock_timestamp() FROM claimed
       ON CONFLICT (project_id, kind) DO UPDATE SET claimed_at = EXCLUDED.claimed_at)
     SELECT * FROM claimed`,
    [id, kind, claim.owner, claim.leaseMs],
  );
  return rows[0];
}

/**
 * Claims the task of `kind` that was handed over longest ago (started, then released by a draining
 * worker or freed when its lease lapsed or stalled, and not yet taken again), with its message:
 * a task under way goes on before any task not yet started, wherever its message waits on the bus.
 * Undefined when there is none.
 */
export async function claimHandedOverTask(
  db: Queryable,
  kind: TaskKind,
  claim: { owner: string; leaseMs: number },
): Promise<(ClaimedTask & { readonly message: string }) | undefined> {
  const { rows } = await db.query<ClaimedTask & { message: string }>(
    `WITH handed AS (
       SELECT id FROM tasks t
        WHERE kind = $1 AND status = 'pending' AND owner IS NULL AND started_at IS NOT NULL
          AND EXISTS (SELECT 1 FROM task_outbox o WHERE o.task_id = t.id)
        ORDER BY started_at LIMIT 1 FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE tasks t SET owner = $2, attempt = t.attempt + 1,
              lease_until = clock_timestamp() + $3 * interval '1 millisecond', heartbeat_at = clock_timestamp()
         FROM handed WHERE t.id = handed.id
        RETURNING t.id, t.attempt, t.owner, t.project_id, t.options, t.progress_processed, t.requested_by,
                  t.replay_of),
     recorded AS (INSERT INTO task_attempts (task_id, attempt, owner) SELECT id, attempt, owner FROM claimed)
     SELECT claimed.*, o.message FROM claimed JOIN task_outbox o ON o.task_id = claimed.id`,
    [kind, claim.owner, claim.leaseMs],
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
 * Gives the task back: the attempt ends `released` (its worker is stopping) or `stalled` (its work
 * made no progress, which counts as a lapse, so a task that stalls every worker ends TaskExpired),
 * and the task's message is offered again at once, for another worker to go on from where this
 * one stopped.
 */
export async function releaseTask(
  db: Queryable,
  attempt: TaskAttempt,
  outcome: 'released' | 'stalled' = 'released',
): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `WITH released AS (
       UPDATE tasks SET owner = NULL, lease_until = NULL,
              lapses = lapses + CASE WHEN $4 = 'stalled' THEN 1 ELSE 0 END
        WHERE id = $1 AND status = 'pending' AND attempt = $2 AND owner = $3
        RETURNING id),
     closed AS (
       UPDATE task_attempts SET ended_at = clock_timestamp(), outcome = $4
        WHERE task_id = (SELECT id FROM released) AND attempt = $2),
     offered AS (UPDATE task_outbox SET published_at = NULL WHERE task_id = (SELECT id FROM released))
     SELECT id FROM released`,
    [attempt.id, attempt.attempt, attempt.owner, outcome],
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
