import type { PoolClient, Queryable } from './pool.js';

// The projects of a deployment (sql/026_projects.sql): each its id, its domain and its project
// file, sealed, since a project file holds secrets (webhook secrets, a Firebase signer key). Every
// write moves the registry's revision in the same transaction: the one number every process
// watches to know that its projects changed.

/** A project as stored. */
export interface StoredProject {
  readonly id: string;
  readonly domain: string;
  /** The project file, sealed. */
  readonly document: string;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** What a project holds and what it last did (userctl projects show). */
export interface ProjectUsage {
  readonly users: number;
  readonly pending_tasks: number;
  readonly last_import: Date | null;
  readonly last_export: Date | null;
}

/** The registry's revision: moved by every put and delete. */
export async function projectsRevision(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ revision: string }>(
    'SELECT revision::text AS revision FROM project_registry',
  );
  return rows[0]?.revision ?? '0';
}

/** Every project, in id order. */
export async function readProjects(db: Queryable): Promise<StoredProject[]> {
  const { rows } = await db.query<StoredProject>(
    'SELECT id, domain, document, created_at, updated_at FROM projects ORDER BY id',
  );
  return rows;
}

/** One project, or undefined. */
export async function findProject(db: Queryable, id: string): Promise<StoredProject | undefined> {
  const { rows } = await db.query<StoredProject>(
    'SELECT id, domain, document, created_at, updated_at FROM projects WHERE id = $1',
    [id],
  );
  return rows[0];
}

/** The project other than `id` that serves `domain` (domains compare without case), if any. */
export async function projectOfDomain(
  db: Queryable,
  domain: string,
  id: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM projects WHERE lower(domain) = lower($1) AND id <> $2',
    [domain, id],
  );
  return rows[0]?.id;
}

/** Holds the right to write the project until the transaction ends (processes starting at once). */
export async function lockProject(client: PoolClient, id: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`project:${id}`]);
}

/**
 * Creates or replaces a project; whether it was created. Run it in put's transaction. Its bound on
 * running tasks (null: the deployment's) is kept beside the sealed file for the claim to read.
 */
export async function writeProject(
  client: PoolClient,
  project: {
    readonly id: string;
    readonly domain: string;
    readonly document: string;
    readonly runningTasksLimit: number | null;
  },
): Promise<boolean> {
  const { rows } = await client.query<{ created: boolean }>(
    `INSERT INTO projects (id, domain, document, running_tasks_limit) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET domain = EXCLUDED.domain, document = EXCLUDED.document,
            running_tasks_limit = EXCLUDED.running_tasks_limit, updated_at = now()
     RETURNING xmax = 0 AS created`,
    [project.id, project.domain, project.document, project.runningTasksLimit],
  );
  return rows[0]?.created ?? false;
}

/** Removes a project's row; whether there was one. */
export async function removeProject(client: PoolClient, id: string): Promise<boolean> {
  const { rowCount } = await client.query('DELETE FROM projects WHERE id = $1', [id]);
  return rowCount === 1;
}

/** Moves the registry's revision, in the transaction of the change. */
export async function moveRevision(client: PoolClient): Promise<void> {
  await client.query('UPDATE project_registry SET revision = revision + 1');
}

/** How many users and pending tasks the project has, and when its last import and export began. */
export async function projectUsage(db: Queryable, id: string): Promise<ProjectUsage> {
  const { rows } = await db.query<ProjectUsage>(
    `SELECT (SELECT count(*)::int FROM users WHERE project_id = $1) AS users,
            (SELECT count(*)::int FROM tasks WHERE project_id = $1 AND status = 'pending') AS pending_tasks,
            (SELECT max(created_at) FROM tasks WHERE project_id = $1 AND kind = 'import') AS last_import,
            (SELECT max(created_at) FROM tasks WHERE project_id = $1 AND kind = 'export') AS last_export`,
    [id],
  );
  return rows[0] as ProjectUsage;
}

/** Whether the project holds any user or task: deleting it then needs a purge. */
export async function projectHoldsData(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ holds: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE project_id = $1)
         OR EXISTS (SELECT 1 FROM tasks WHERE project_id = $1) AS holds`,
    [id],
  );
  return rows[0]?.holds ?? false;
}
