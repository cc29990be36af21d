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

/** Where the job `name` stands in what it walks a part per turn; undefined: at the start. */
export async function upkeepState(db: Queryable, name: string): Promise<string | undefined> {
  const { rows } = await db.query<{ state: string | null }>('SELECT state FROM upkeep_jobs WHERE name = $1', [
    name,
  ]);
  return rows[0]?.state ?? undefined;
}

/** Records where the job `name` stands (undefined: back at the start). */
export async function saveUpkeepState(db: Queryable, name: string, state: string | undefined): Promise<void> {
  await db.query(
    `INSERT INTO upkeep_jobs (name, state) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET state = excluded.state`,
    [name, state ?? null],
  );
}
