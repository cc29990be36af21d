import type { Queryable } from './pool.js';

/** A change of a user, as the outbox holds it and the `user-changes` topic carries it. */
export interface UserChange {
  readonly seq: string;
  readonly user_id: string;
  /** The user's project (absent from changes published before changes named it). */
  readonly project_id?: string;
  /** When the change was written (RFC 3339), to measure the index's lag. */
  readonly changed_at: string;
}

/**
 * Marks users of a project changed, in the caller's transaction: the search index reads them
 * again. Every writer of users calls this (import batches do; so must the platform's login service when it
 * writes `last_login_at`).
 */
export async function recordUserChanges(
  db: Queryable,
  project: string,
  userIds: readonly string[],
): Promise<void> {
  if (userIds.length === 0) return;
  await db.query('INSERT INTO user_changes (project_id, user_id) SELECT $1, unnest($2::uuid[])', [
    project,
    userIds,
  ]);
}

/** The oldest changes not yet published, locked so that one relay publishes each. */
export async function takeUserChanges(db: Queryable, limit: number): Promise<UserChange[]> {
  const { rows } = await db.query<UserChange>(
    // Ordered by the bigint column (the primary key's order), not by the text the select names `seq`.
    `SELECT c.seq::text AS seq, c.user_id, c.project_id, c.changed_at FROM user_changes c
      ORDER BY c.seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows;
}

/** Drops changes once published. */
export async function dropUserChanges(db: Queryable, seqs: readonly string[]): Promise<void> {
  await db.query('DELETE FROM user_changes WHERE seq = ANY($1::bigint[])', [seqs]);
}
