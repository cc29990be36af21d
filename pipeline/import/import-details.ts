import { pipeline, type Readable } from 'node:stream';
import type { PoolClient, Queryable } from '../db/pool.js';
import { streamRows } from '../db/row-stream.js';
import { streamStage } from '../stream-stage.js';
import type { ImportDetail } from './import-batch.js';

interface DetailRow {
  index: number;
  line: number | null;
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
    `SELECT index, line, record, outcome, user_id, warnings, errors FROM import_details
      WHERE task_id = $1 AND ($2::text IS NULL OR outcome = $2)
      ORDER BY index OFFSET $3 LIMIT $4`,
    [taskId, page.outcome ?? null, page.offset ?? 0, page.limit + 1],
  );
  return { details: rows.slice(0, page.limit).map(detailOf), more: rows.length > page.limit };
}

/**
 * Every stored result of an import task, in request order, streamed through a cursor as the lines
 * of its results file: each detail as a status read shows it (members in the same order, absent
 * ones left out), written as JSON text by Postgres, so that no line is parsed and written again.
 */
export function streamImportDetailLines(client: PoolClient, taskId: string): Readable {
  const rows = streamRows(
    client,
    `SELECT '{"index":' || index || coalesce(',"line":' || line, '') || ',"record":' || record::text || ',"outcome":' || to_json(outcome)::text
            || coalesce(',"user_id":"' || user_id || '"', '')
            || coalesce(',"warnings":' || warnings::text, '')
            || coalesce(',"errors":' || errors::text, '') || E'}\\n' AS line
       FROM import_details WHERE task_id = $1 ORDER BY index`,
    [taskId],
    2000,
  );
  const lines = streamStage({ writableObjectMode: true }, (row: { line: string }) => row.line);
  // The reader of `lines` learns of the cursor's failure: pipeline destroys each with the other's error.
  return pipeline(rows, lines, () => {});
}

function detailOf(d: DetailRow): ImportDetail {
  return {
    index: d.index,
    ...(d.line === null ? {} : { line: d.line }),
    record: d.record,
    outcome: d.outcome,
    ...(d.user_id ? { user_id: d.user_id } : {}),
    ...(d.warnings ? { warnings: d.warnings } : {}),
    ...(d.errors ? { errors: d.errors } : {}),
  };
}
