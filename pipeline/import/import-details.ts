import { type Readable, Transform } from 'node:stream';
import QueryStream from 'pg-query-stream';
import type { PoolClient, Queryable } from '../db/pool.js';
import type { ImportDetail } from './import-batch.js';

interface DetailRow {
  index: number;
  record: unknown;
  outcome: ImportDetail['outcome'];
  user_id: string | null;
  warnings: ImportDetail['warnings'] | null;
  errors: ImportDetail['errors'] | null;
}

/** Which details a status read shows: of one outcome only, and a page of them. */
export interface DetailsPage {
  readonly outcome?: ImportDetail['outcome'];
  readonly offset?: number;
  readonly limit?: number;
}

/** A page of details, and whether more follow it. */
export interface FoundDetails {
  readonly details: ImportDetail[];
  readonly more: boolean;
}

/**
 * The stored result of the records of an import task, in request order (those of `outcome`, from
 * `offset`, at most `limit`), and whether more follow. Absent values are omitted, never null; the
 * record itself is shown exactly as stored.
 */
export async function findImportDetails(
  db: Queryable,
  taskId: string,
  page: DetailsPage & { readonly limit: number },
): Promise<FoundDetails> {
  const { rows } = await db.query<DetailRow>(
    `SELECT index, record, outcome, user_id, warnings, errors FROM import_details
      WHERE task_id = $1 AND ($2::text IS NULL OR outcome = $2)
      ORDER BY index OFFSET $3 LIMIT $4`,
    [taskId, page.outcome ?? null, page.offset ?? 0, page.limit + 1],
  );
  return { details: rows.slice(0, page.limit).map(detailOf), more: rows.length > page.limit };
}

/**
 * Every stored result of an import task, in request order, streamed through a cursor: the lines
 * of its results file. Each detail is as a status read shows it.
 */
export function streamImportDetails(client: PoolClient, taskId: string): Readable {
  const rows: Readable = client.query(
    new QueryStream(
      `SELECT index, record, outcome, user_id, warnings, errors FROM import_details
        WHERE task_id = $1 ORDER BY index`,
      [taskId],
      { batchSize: 2000 },
    ),
  );
  const details = new Transform({
    objectMode: true,
    transform: (row: DetailRow, _enc, done) => done(null, detailOf(row)),
  });
  rows.once('error', (err) => details.destroy(err));
  return rows.pipe(details);
}

function detailOf(d: DetailRow): ImportDetail {
  return {
    index: d.index,
    record: d.record,
    outcome: d.outcome,
    ...(d.user_id ? { user_id: d.user_id } : {}),
    ...(d.warnings ? { warnings: d.warnings } : {}),
    ...(d.errors ? { errors: d.errors } : {}),
  };
}
