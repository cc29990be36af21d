import type { TaskKind } from '../../../schemas/index.js';
import type { Pool, Queryable } from '../pool.js';
import { withTransaction } from '../transaction.js';
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
 * Tasks first in the claim's order that it tries to lock: claims are serialized, so only a cancel
 * or the upkeep may hold one of them at the moment, never all.
 */
const CANDIDATES = 32;

/** A task claimed with the body of its message, unless it is the message the worker holds. */
export interface TakenTaskRow extends ClaimedTask {
  /** The task's message from the outbox; null when the task is the one the worker's message names. */
  readonly message: string | null;
}

/**
 * Claims the next task of `kind` for `owner` until the lease ends: a new attempt, recorded. A bus
 * message only wakes a slot (and a slot that just freed claims without one); which task the slot
 * takes is decided here, from the task rows, so the order is the same on every bus and across
 * every partition:
 * - a task handed over (started, then released by a draining worker or freed when its lease lapsed
 *   or stalled) goes first, the one started longest ago first;
 * - then the project with the fewest tasks of the kind running and, among those, the one whose last
 *   task was claimed longest ago (sql/027_project_claims.sql): one project's backlog never holds
 *   another's tasks back;
 * - within a project, the task of the message in hand (its body is already read), then the oldest.
 * A project already running its bound of tasks of the kind (its own, else `runningTasksLimit`; 0:
 * none) is passed over. Every waiting task has a message on its way (the outbox relays it until
 * the task ends), so a message whose slot took another task leaves one for its own; a task passed
 * over at its project's bound is taken by the slot its project frees. Undefined when no task can
 * be taken: a message delivered twice, or whose task was taken by another's message. Claims of
 * a kind are taken one at a time (a transaction lock, held for the one statement), so that two
 * slots claiming at once cannot both see a project under its bound. A lease that lapsed is freed
 * by the upkeep, never here, so that its attempt is closed in one place.
 */
export async function claimTask(
  pool: Pool,
  kind: TaskKind,
  messageTaskId: string | null,
  claim: { owner: string; leaseMs: number; runningTasksLimit: number },
): Promise<TakenTaskRow | undefined> {
  return withTransaction(pool, async (client) => {
    // Taken before the statement, whose snapshot then sees every claim committed before it.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('claim:' || current_schema() || ':' || $1))`, [
      kind,
    ]);
    const { rows } = await client.query<TakenTaskRow>(
      `WITH running AS (
         SELECT project_id, count(*) AS n FROM tasks
          WHERE kind = $1 AND status = 'pending' AND owner IS NOT NULL
          GROUP BY project_id),
       -- The first few in order, sorted apart from the lock: a locking sort would order every
       -- waiting task, where the first few need only a top-N pass.
       candidates AS (
         SELECT t.id, t.started_at, coalesce(r.n, 0) AS running, c.claimed_at, t.id = $2 AS messaged,
                t.created_at
           FROM tasks t
           LEFT JOIN running r ON r.project_id = t.project_id
           LEFT JOIN project_claims c ON c.project_id = t.project_id AND c.kind = $1
           LEFT JOIN projects p ON p.id = t.project_id
          WHERE t.kind = $1 AND t.status = 'pending' AND t.owner IS NULL
            AND EXISTS (SELECT 1 FROM task_outbox o WHERE o.task_id = t.id)
            AND coalesce(r.n, 0) < coalesce(p.running_tasks_limit, nullif($5, 0), 2147483647)
          ORDER BY 2 NULLS LAST, 3, 4 NULLS FIRST, 5 DESC, 6
          LIMIT ${CANDIDATES}),
       next AS (
         SELECT t.id FROM tasks t JOIN candidates k ON k.id = t.id
          WHERE t.status = 'pending' AND t.owner IS NULL
          ORDER BY k.started_at NULLS LAST, k.running, k.claimed_at NULLS FIRST, k.messaged DESC, k.created_at
          LIMIT 1 FOR UPDATE OF t SKIP LOCKED),
       claimed AS (
         UPDATE tasks t SET owner = $3, attempt = t.attempt + 1,
                lease_until = clock_timestamp() + $4 * interval '1 millisecond',
                started_at = coalesce(t.started_at, clock_timestamp()), heartbeat_at = clock_timestamp()
           FROM next WHERE t.id = next.id AND t.status = 'pending' AND t.owner IS NULL
          RETURNING t.id, t.attempt, t.owner, t.project_id, t.options, t.progress_processed, t.requested_by,
                    t.replay_of),
       recorded AS (INSERT INTO task_attempts (task_id, attempt, owner) SELECT id, attempt, owner FROM claimed),
       served AS (
         INSERT INTO project_claims (project_id, kind, claimed_at)
         SELECT project_id, $1, clock_timestamp() FROM claimed
         ON CONFLICT (project_id, kind) DO UPDATE SET claimed_at = EXCLUDED.claimed_at)
       SELECT claimed.*, CASE WHEN claimed.id = $2 THEN NULL ELSE o.message END AS message
         FROM claimed JOIN task_outbox o ON o.task_id = claimed.id`,
      [kind, messageTaskId, claim.owner, claim.leaseMs, claim.runningTasksLimit],
    );
    return rows[0];
  });
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
