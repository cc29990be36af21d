import type { Queryable } from '../db/pool.js';
import type { ImportDetail } from './plan-batch.js';

interface DetailRow {
  index: number;
  record: unknown;
  outcome: ImportDetail['outcome'];
  user_id: string | null;
  warnings: ImportDetail['warnings'] | null;
  errors: ImportDetail['errors'] | null;
}

/**
 * The stored result of every record of an import task, in request order. Absent values are
 * omitted, never null; the record itself is shown exactly as stored.
 */
export async function findImportDetails(db: Queryable, taskId: string): Promise<ImportDetail[]> {
  const { rows } = await db.query<DetailRow>(
    `SELECT index, record, outcome, user_id, warnings, errors FROM import_details WHERE task_id = $1 ORDER BY index`,
    [taskId],
  );
  return rows.map((d) => ({
    index: d.index,
    record: d.record,
    outcome: d.outcome,
    ...(d.user_id ? { user_id: d.user_id } : {}),
    ...(d.warnings ? { warnings: d.warnings } : {}),
    ...(d.errors ? { errors: d.errors } : {}),
  }));
}
