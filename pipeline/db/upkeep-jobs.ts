import type { Queryable } from './pool.js';

// The turns of the upkeep's sweeps (sql/035_upkeep_jobs.sql): one process of the deployment per turn.

/**
 * Takes the job `name` for this turn when it is due (or has never run), and makes it due again in
 * `everyMs`: true for the one caller of the deployment whose statement moved it.
 */
export async function takeUpkeepTurn(db: Queryable, name: string, everyMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO upkeep_jobs (name, due_at) VALUES ($1, clock_timestamp() + $2 * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET due_at = excluded.due_at WHERE upkeep_jobs.due_at <= clock_timestamp()
     RETURNING 1`,
    [name, everyMs],
  );
  return rows.length === 1;
}
