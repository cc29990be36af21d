import type { Queryable } from './pool.js';

// The task events a task's end writes (sql/021_task_events.sql), their deliveries to the project's
// webhook endpoints, every attempt at one, and the endpoints a 410 disabled.

/** An endpoint as the deliveries know it: its project, its id, where it is, the event types it wants. */
export interface EventEndpoint {
  readonly project_id: string;
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
}

/** The projects of the oldest events not yet fanned out (of up to `limit` events). */
export async function projectsOfNewEvents(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT DISTINCT project_id FROM (
       SELECT project_id FROM task_events WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT $1) e`,
    [limit],
  );
  return rows.map((r) => r.project_id);
}

/**
 * Writes the deliveries of up to `limit` events of `projects` not yet fanned out: one per enabled
 * endpoint of the event's project that wants its type (`endpoints`: every endpoint of those
 * projects). Returns how many events it fanned out.
 */
export async function fanOutEvents(
  db: Queryable,
  projects: readonly string[],
  endpoints: readonly EventEndpoint[],
  limit: number,
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH taken AS (
       SELECT id, type, project_id FROM task_events WHERE fanned_out_at IS NULL AND project_id = ANY ($1)
        ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED),
     written AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id)
       SELECT taken.id, ep.id FROM taken
         JOIN jsonb_to_recordset($2::jsonb) AS ep(project_id text, id text, events text[])
           ON ep.project_id = taken.project_id AND taken.type = ANY (ep.events)
        WHERE NOT EXISTS (SELECT 1 FROM webhook_disabled_endpoints d
                           WHERE d.project_id = taken.project_id AND d.endpoint_id = ep.id)
       ON CONFLICT DO NOTHING)
     UPDATE task_events SET fanned_out_at = clock_timestamp() WHERE id IN (SELECT id FROM taken)
     RETURNING 1 AS n`,
    [
      projects,
      JSON.stringify(endpoints.map(({ project_id, id, events }) => ({ project_id, id, events }))),
      limit,
    ],
  );
  return rows.length;
}

/** A delivery a worker took: the event, the endpoint, and the attempt it begins. */
export interface TakenDelivery {
  readonly projectId: string;
  readonly eventId: string;
  readonly endpointId: string;
  /** The attempt's number (1 for the first); the delivery is this attempt's while it holds it. */
  readonly attempt: number;
  /** The attempt's row in webhook_attempts. */
  readonly attemptId: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly createdAt: Date;
}

/** The projects of the deliveries due now (of up to `limit` of them). */
export async function projectsOfDueDeliveries(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT DISTINCT e.project_id FROM (
       SELECT event_id FROM webhook_deliveries
        WHERE state = 'pending' AND next_attempt_at <= clock_timestamp()
          AND (leased_until IS NULL OR leased_until <= clock_timestamp())
        ORDER BY next_attempt_at LIMIT $1) d
       JOIN task_events e ON e.id = d.event_id`,
    [limit],
  );
  return rows.map((r) => r.project_id);
}

/**
 * Takes up to `limit` due deliveries to these endpoints (each of its project) for `leaseSeconds`,
 * and records the attempt each begins. A delivery whose worker died is due again once its lease
 * ran out.
 */
export async function takeDueDeliveries(
  db: Queryable,
  endpoints: readonly EventEndpoint[],
  limit: number,
  leaseSeconds: number,
): Promise<TakenDelivery[]> {
  const { rows } = await db.query<{
    project_id: string;
    event_id: string;
    endpoint_id: string;
    attempt: number;
    attempt_id: string;
    type: string;
    payload: Record<string, unknown>;
    created_at: Date;
  }>(
    `WITH ep AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS ep(project_id text, id text, url text)),
     due AS (
       SELECT d.event_id, d.endpoint_id, ep.url FROM webhook_deliveries d
         JOIN task_events e ON e.id = d.event_id
         JOIN ep ON ep.project_id = e.project_id AND ep.id = d.endpoint_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= clock_timestamp()
          AND (d.leased_until IS NULL OR d.leased_until <= clock_timestamp())
        ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE OF d SKIP LOCKED),
     taken AS (
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1, leased_until = clock_timestamp() + make_interval(secs => $3)
         FROM due WHERE d.event_id = due.event_id AND d.endpoint_id = due.endpoint_id
       RETURNING d.event_id, d.endpoint_id, d.attempts, due.url),
     begun AS (
       INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, url)
       SELECT event_id, endpoint_id, attempts, url FROM taken
       RETURNING id, event_id, endpoint_id)
     SELECT e.project_id, taken.event_id, taken.endpoint_id, taken.attempts AS attempt,
            begun.id::text AS attempt_id, e.type, e.payload, e.created_at
       FROM taken JOIN begun USING (event_id, endpoint_id) JOIN task_events e ON e.id = taken.event_id`,
    [
      JSON.stringify(endpoints.map(({ project_id, id, url }) => ({ project_id, id, url }))),
      limit,
      leaseSeconds,
    ],
  );
  return rows.map((r) => ({
    projectId: r.project_id,
    eventId: r.event_id,
    endpointId: r.endpoint_id,
    attempt: r.attempt,
    attemptId: r.attempt_id,
    type: r.type,
    payload: r.payload,
    createdAt: r.created_at,
  }));
}

/** What became of an attempt. */
export type AttemptOutcome =
  | { readonly outcome: 'delivered' }
  | { readonly outcome: 'retry'; readonly nextAttemptAt: Date }
  | { readonly outcome: 'failed' }
  | { readonly outcome: 'disabled' };

/** What the endpoint answered (its status code), or why it did not (error), and how long it took. */
export interface AttemptAnswer {
  readonly statusCode?: number;
  readonly error?: string;
  readonly durationMs: number;
}

/**
 * Records the end of an attempt and moves its delivery on: delivered, due again at
 * `nextAttemptAt`, failed, or disabled with every pending delivery to its endpoint (the endpoint
 * is disabled for the project). A delivery another attempt took meanwhile (this one's lease ran
 * out) is left to that attempt; the answer is recorded all the same.
 */
export async function finishAttempt(
  db: Queryable,
  taken: TakenDelivery,
  answer: AttemptAnswer,
  end: AttemptOutcome,
): Promise<void> {
  await db.query(
    `WITH attempt AS (
       UPDATE webhook_attempts SET outcome = $5, status_code = $6, error = $7, duration_ms = $8
        WHERE id = $4::bigint),
     delivery AS (
       UPDATE webhook_deliveries
          SET state = CASE $5 WHEN 'retry' THEN 'pending' ELSE $5 END,
              next_attempt_at = coalesce($9, next_attempt_at), leased_until = NULL
        WHERE event_id = $2 AND endpoint_id = $3 AND attempts = $10 AND state = 'pending'),
     disabled AS (
       INSERT INTO webhook_disabled_endpoints (project_id, endpoint_id)
       SELECT $1, $3 WHERE $5 = 'disabled' ON CONFLICT DO NOTHING)
     UPDATE webhook_deliveries d SET state = 'disabled', leased_until = NULL
       FROM task_events e
      WHERE $5 = 'disabled' AND d.endpoint_id = $3 AND d.state = 'pending' AND e.id = d.event_id
        AND e.project_id = $1 AND NOT (d.event_id = $2)`,
    [
      taken.projectId,
      taken.eventId,
      taken.endpointId,
      taken.attemptId,
      end.outcome,
      answer.statusCode ?? null,
      answer.error ?? null,
      Math.round(answer.durationMs),
      end.outcome === 'retry' ? end.nextAttemptAt : null,
      taken.attempt,
    ],
  );
}

/** An attempt as the deliveries list shows it. */
export interface AttemptRow {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  /** The task of a task event; null for a change feed event. */
  readonly task_id: string | null;
  readonly endpoint_id: string;
  readonly url: string;
  readonly attempt: number;
  readonly started_at: Date;
  readonly duration_ms: number | null;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly outcome: string | null;
}

/** Which attempts a list shows: of one endpoint, event or task; after an id; how many. */
export interface AttemptListPage {
  readonly endpointId?: string | undefined;
  readonly eventId?: string | undefined;
  readonly taskId?: string | undefined;
  /** The id of the last attempt of the page before: this page starts after it. */
  readonly after?: string | undefined;
  readonly limit: number;
}

/** The project's delivery attempts, newest first: a page, and whether more follow. */
export async function listAttempts(
  db: Queryable,
  project: string,
  page: AttemptListPage,
): Promise<{ attempts: AttemptRow[]; more: boolean }> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT a.id::text AS id, a.event_id, e.type AS event_type, e.task_id, a.endpoint_id, a.url, a.attempt,
            a.started_at, a.duration_ms, a.status_code, a.error, a.outcome
       FROM webhook_attempts a JOIN task_events e ON e.id = a.event_id
      WHERE e.project_id = $1
        AND ($2::text IS NULL OR a.endpoint_id = $2)
        AND ($3::uuid IS NULL OR a.event_id = $3)
        AND ($4::text IS NULL OR e.task_id = $4)
        AND ($5::bigint IS NULL OR a.id < $5::bigint)
      ORDER BY a.id DESC LIMIT $6`,
    [
      project,
      page.endpointId ?? null,
      page.eventId ?? null,
      page.taskId ?? null,
      page.after ?? null,
      page.limit + 1,
    ],
  );
  return { attempts: rows.slice(0, page.limit), more: rows.length > page.limit };
}

/** The project's endpoints a 410 disabled, and when. */
export async function disabledEndpoints(db: Queryable, project: string): Promise<Map<string, Date>> {
  const { rows } = await db.query<{ endpoint_id: string; disabled_at: Date }>(
    'SELECT endpoint_id, disabled_at FROM webhook_disabled_endpoints WHERE project_id = $1',
    [project],
  );
  return new Map(rows.map((r) => [r.endpoint_id, r.disabled_at]));
}

/** Enables a disabled endpoint again: events from now on go to it. Whether it was disabled. */
export async function enableEndpoint(db: Queryable, project: string, endpointId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'DELETE FROM webhook_disabled_endpoints WHERE project_id = $1 AND endpoint_id = $2',
    [project, endpointId],
  );
  return rowCount === 1;
}

/**
 * Deletes the events (with their deliveries and attempts) written more than `seconds` ago: by then
 * every delivery has ended, delivered or given up. The bound is the statement's time, stable, so
 * that it bounds the scan of the index on created_at.
 */
export async function deleteEventsBefore(db: Queryable, seconds: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM task_events WHERE id IN (
       SELECT id FROM task_events WHERE created_at <= statement_timestamp() - make_interval(secs => $1) LIMIT 1000)`,
    [seconds],
  );
  return rowCount ?? 0;
}

/** A change feed event to the webhooks of its project: its type and body, and the id it is deduplicated by. */
export interface ChangeWebhookEvent {
  readonly id: string;
  readonly project_id: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
}

/**
 * Writes change feed events into the webhooks' outbox (fanned out and delivered as task events
 * are). An event published again (a publisher that died before it moved its cursor) is written once:
 * its row's id is derived from the event's.
 */
export async function writeChangeEvents(db: Queryable, events: readonly ChangeWebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO task_events (id, project_id, type, payload)
     SELECT md5(e.id)::uuid, e.project_id, e.type, e.payload
       FROM jsonb_to_recordset($1::jsonb) AS e(id text, project_id text, type text, payload jsonb)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(events)],
  );
}
