import type { Queryable } from './pool.js';

// The blobs task attempts write (an export's file, an import's results file; sql/015 and 022),
// and which of them no task names.

/** Records the blob a task attempt is about to write, before any of it can be committed. */
export async function recordTaskBlob(db: Queryable, taskId: string, blobName: string): Promise<void> {
  await db.query('INSERT INTO task_blobs (blob_name, task_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    blobName,
    taskId,
  ]);
}

/**
 * Up to `limit` recorded blobs whose attempt is over without its task naming them: the task is
 * gone, or completed with another file (or none).
 */
export async function findAbandonedTaskBlobs(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ blob_name: string }>(
    `SELECT b.blob_name FROM task_blobs b LEFT JOIN tasks t ON t.id = b.task_id
      WHERE t.id IS NULL OR (t.status = 'completed' AND t.file_name IS DISTINCT FROM b.blob_name)
      LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.blob_name);
}

/** Forgets recorded blobs, once they are deleted. */
export async function forgetTaskBlobs(db: Queryable, names: readonly string[]): Promise<void> {
  await db.query('DELETE FROM task_blobs WHERE blob_name = ANY($1::text[])', [names]);
}

/** Of `names`, those that no task names as its file and that no pending task's attempt writes. */
export async function unnamedBlobs(db: Queryable, names: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT n.name FROM unnest($1::text[]) AS n(name)
      WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.file_name = n.name)
        AND NOT EXISTS (SELECT 1 FROM task_blobs b JOIN tasks t ON t.id = b.task_id
                         WHERE b.blob_name = n.name AND t.status = 'pending')`,
    [names],
  );
  return rows.map((r) => r.name);
}
