import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../db/pool.js';
import { withSnapshot } from '../db/transaction.js';
import { type ChangeRow, type ChangeScope, readChangeRows } from '../db/user-change-log.js';
import { ApiError } from '../errors.js';
import type { UserRecord } from '../export/assemble-records.js';
import { readUserRecords } from '../export/user-rows.js';
import { type ChangesCursor, keepSnapshot, NO_USER } from './changes-cursor.js';

// Reading the feed (docs/changes.md): a page of the log below the commit watermark, each event
// with its user's record read in the same snapshot, and the cursor after it. The HTTP feed, the
// Kafka topic and the webhooks all read it here, so they carry the same events.

/** One event of the feed, as every reader receives it. */
export interface ChangeEvent {
  /** Stable across reads: `<transaction id>-<user id>`. */
  readonly id: string;
  readonly type: 'user.created' | 'user.updated' | 'user.deleted';
  readonly user_id: string;
  /** When the change's statement ran (RFC 3339). */
  readonly occurred_at: string;
  /** The user as the ndjson export writes it, at the time of the read; absent once deleted. */
  readonly record?: UserRecord;
}

/** An event with the project it belongs to (the publisher reads every project's) and the cursor after it. */
export interface ProjectChange {
  readonly project: string;
  readonly event: ChangeEvent;
  readonly cursor: ChangesCursor;
}

/** A page of the feed and the cursor after it. */
export interface ChangesPage {
  readonly changes: ProjectChange[];
  readonly next: ChangesCursor;
  /** The log held a whole page after the cursor: more may follow at once. */
  readonly full: boolean;
}

/** What a read of the feed names. */
export interface ChangesRead {
  /**
   * Whose events are read: one project's, a publisher's projects (the others' are passed over
   * unread), or every project's when undefined.
   */
  readonly scope: ChangeScope;
  readonly after: ChangesCursor;
  readonly limit: number;
  /** The issuer of a project's TOTP URIs (its public origin), as its export writes them. */
  readonly totpIssuer: (project: string) => Promise<string>;
}

/**
 * The events after `read.after`, at most `read.limit`, with the cursor after them (past the
 * watermark when the page is not full). ChangesCursorExpired when retention may have deleted
 * events after the cursor; ChangesCursorInvalid for one past the feed's end.
 */
export async function readChanges(pool: Pool, read: ChangesRead): Promise<ChangesPage> {
  return withSnapshot(pool, async (client) => {
    const page = await readChangeRows(client, read.scope, read.after, read.limit);
    if (page.floor !== '0' && BigInt(read.after.txid) <= BigInt(page.floor))
      throw new ApiError('ChangesCursorExpired', 'the cursor is older than the change feed keeps', {
        retention: 'CHANGES_RETENTION_SECONDS',
      });
    // Every cursor handed out is at or below a watermark, and the watermark never goes back.
    if (BigInt(read.after.txid) > BigInt(page.watermark))
      throw new ApiError('ChangesCursorInvalid', 'not a change feed cursor: it is past the feed');
    const records = new Map<string, Map<string, UserRecord>>();
    const usersOf = new Map<string, Set<string>>();
    for (const row of page.rows) {
      const users = usersOf.get(row.project_id) ?? new Set<string>();
      usersOf.set(row.project_id, users.add(row.user_id));
    }
    for (const [project, users] of usersOf) {
      const issuer = await read.totpIssuer(project);
      records.set(project, await readUserRecords(client, project, [...users], { totpIssuer: issuer }));
    }
    const changes = page.rows.map((row) => ({
      project: row.project_id,
      event: changeEvent(row, records.get(row.project_id)?.get(row.user_id)),
      cursor: keepSnapshot({ txid: row.txid, userId: row.user_id }, read.after.snapshot),
    }));
    return {
      changes,
      next: nextCursor(read, page.rows, page.watermark),
      full: page.rows.length >= read.limit,
    };
  });
}

function changeEvent(row: ChangeRow, record: UserRecord | undefined): ChangeEvent {
  const event = {
    id: `${row.txid}-${row.user_id}`,
    user_id: row.user_id,
    occurred_at: row.occurred_at.toISOString(),
  };
  if (record === undefined) return { ...event, type: 'user.deleted' };
  return { ...event, type: row.kind === 'created' ? 'user.created' : 'user.updated', record };
}

/**
 * After a full page: its last event. After a page that was not full: the watermark, before which
 * every event has been read. The export's snapshot is kept while events of its transactions may
 * still follow.
 */
function nextCursor(read: ChangesRead, rows: readonly ChangeRow[], watermark: string): ChangesCursor {
  const last = rows.at(-1);
  let position: { txid: string; userId: string } = read.after;
  if (rows.length >= read.limit && last) position = { txid: last.txid, userId: last.user_id };
  else if (BigInt(watermark) > BigInt(read.after.txid)) position = { txid: watermark, userId: NO_USER };
  return keepSnapshot(position, read.after.snapshot);
}

/** How often a waiting read looks at the log again. */
const WAIT_POLL_MS = 200;

/**
 * readChanges, waiting up to `waitMs` for an event when there is none (a long poll); the wait
 * ends early when `signal` aborts (the client went away).
 */
export async function waitForChanges(
  pool: Pool,
  read: ChangesRead,
  waitMs: number,
  signal?: AbortSignal,
): Promise<ChangesPage> {
  const deadline = Date.now() + waitMs;
  let after = read.after;
  for (;;) {
    const page = await readChanges(pool, { ...read, after });
    if (page.changes.length > 0 || Date.now() >= deadline || signal?.aborted) return page;
    after = page.next;
    await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(
      () => {},
    );
  }
}
