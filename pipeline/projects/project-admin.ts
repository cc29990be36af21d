import { isDeepStrictEqual } from 'node:util';
import type { BlobStorage } from '../blob/blob-storage.js';
import { projectPrefix } from '../blob/task-files.js';
import type { ProjectConfig, ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { purgeProjectRows } from '../db/project-purge.js';
import {
  findProject,
  lockProject,
  moveRevision,
  type ProjectUsage,
  projectHoldsData,
  projectOfDomain,
  projectUsage,
  readProjects,
  removeProject,
  writeProject,
} from '../db/projects.js';
import { withTransaction } from '../db/transaction.js';
import { ConfigError } from '../errors.js';
import { purgeProjectSearchRows, type SearchStore } from '../search/search-store.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import type { ProjectReader } from './project-registry.js';

// What `userctl projects` does to a deployment's projects. Every change is one transaction that
// moves the registry's revision, so every running process reads it within a second or two.

/** What the project operations stand on. */
export interface ProjectAdminDependencies {
  readonly pool: Pool;
  readonly box: SecretBox;
  readonly read: ProjectReader;
  /** The embedded default (`make start`): a project may leave out public_origin and admin_api.jwks. */
  readonly embedded: boolean;
  /** Where the project's files are; undefined when export is off. */
  readonly blobs?: BlobStorage | undefined;
  /** The search index's store; undefined when Postgres serves search. */
  readonly search?: SearchStore | undefined;
}

/** A project file to put: its name (for messages) and its parsed JSON. */
export interface ProjectFile {
  readonly name: string;
  readonly document: unknown;
}

/** A project as `list` and `show` give it. */
export interface ProjectSummary {
  readonly id: string;
  readonly domain: string;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/**
 * Creates or replaces every project of `files`, all or none: each is checked first, as the service
 * reads it, and a domain may serve only one project. Returns each id with whether it was created.
 */
export async function putProjects(
  deps: ProjectAdminDependencies,
  files: readonly ProjectFile[],
): Promise<{ id: string; created: boolean }[]> {
  const checked = files.map((file) => ({ file, project: checkedProject(deps, file) }));
  const ids = checked.map(({ project }) => project.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new ConfigError(`project ${twice} is given twice`);
  const domains = checked.map(({ project }) => project.domain.toLowerCase());
  const shared = domains.find((d, i) => domains.indexOf(d) !== i);
  if (shared) throw new ConfigError(`domain ${shared} is given to two projects`);
  return withTransaction(deps.pool, async (client) => {
    const results: { id: string; created: boolean }[] = [];
    for (const { file, project } of checked) {
      const other = await projectOfDomain(client, project.domain, project.id);
      if (other && !ids.includes(other))
        throw new ConfigError(`${file.name}: domain ${project.domain} is already project ${other}'s`);
      const created = await writeProject(client, {
        id: project.id,
        domain: project.domain,
        document: deps.box.seal(file.document),
        runningTasksLimit: project.limits.runningTasks ?? null,
      });
      results.push({ id: project.id, created });
    }
    await moveRevision(client);
    return results;
  });
}

/** A project file as the service reads it, with what a project of a deployment must name. */
function checkedProject(deps: ProjectAdminDependencies, file: ProjectFile): ProjectConfig {
  const doc = file.document;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ConfigError(`${file.name}: a project file is a JSON object`);
  const required = ['id', 'domain', ...(deps.embedded ? [] : ['public_origin', 'admin_api.jwks'])];
  const missing = required.filter((path) => memberAt(doc, path) === undefined);
  if (missing.length > 0) throw new ConfigError(`${file.name}: ${missing.join(', ')} must be given`);
  return deps.read(doc, file.name);
}

function memberAt(doc: object, path: string): unknown {
  let value: unknown = doc;
  for (const name of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/** Every project, in id order. */
export async function listProjects(deps: Pick<ProjectAdminDependencies, 'pool'>): Promise<ProjectSummary[]> {
  return (await readProjects(deps.pool)).map(({ id, domain, created_at, updated_at }) => ({
    id,
    domain,
    created_at,
    updated_at,
  }));
}

/** A project's settings (its file, secrets left out) and usage; undefined when there is none. */
export async function showProject(
  deps: Pick<ProjectAdminDependencies, 'pool' | 'box'>,
  id: string,
): Promise<(ProjectSummary & { settings: unknown; usage: ProjectUsage }) | undefined> {
  const row = await findProject(deps.pool, id);
  if (!row) return undefined;
  return {
    id: row.id,
    domain: row.domain,
    created_at: row.created_at,
    updated_at: row.updated_at,
    settings: withoutSecrets(deps.box.open(row.document)),
    usage: await projectUsage(deps.pool, id),
  };
}

/** A project file with each webhook's secret and the Firebase signer key replaced by "(set)". */
function withoutSecrets(document: unknown): unknown {
  const doc = structuredClone(document) as {
    webhooks?: { secret?: unknown }[];
    password_hashes?: { firebase_scrypt?: { signer_key?: unknown } };
  };
  for (const hook of doc.webhooks ?? []) if (hook.secret !== undefined) hook.secret = '(set)';
  const firebase = doc.password_hashes?.firebase_scrypt;
  if (firebase?.signer_key !== undefined) firebase.signer_key = '(set)';
  return doc;
}

/** What a delete removed. */
export interface DeletedProject {
  readonly registered: boolean;
  readonly users: number;
  readonly tasks: number;
  readonly files: number;
}

/**
 * Deletes a project: refused while it holds users or tasks, unless `purge`, which removes them, its
 * files and its search rows, and nothing of any other project. The registration goes first, so no
 * request or task of it is taken while the rest goes; a purge cut short is finished by running it
 * again, registered or not.
 */
export async function deleteProject(
  deps: ProjectAdminDependencies,
  id: string,
  { purge }: { purge: boolean },
): Promise<DeletedProject> {
  if (!purge && (await projectHoldsData(deps.pool, id)))
    throw new ConfigError(`project ${id} has users or tasks: delete it with --purge to remove them too`);
  const registered = await withTransaction(deps.pool, async (client) => {
    const removed = await removeProject(client, id);
    if (removed) await moveRevision(client);
    return removed;
  });
  if (!purge) return { registered, users: 0, tasks: 0, files: 0 };
  const rows = await purgeProjectRows(deps.pool, id);
  let files = 0;
  if (deps.blobs) {
    for (const name of await deps.blobs.list(projectPrefix(id), { uncommitted: true })) {
      await deps.blobs.delete(name);
      files++;
    }
  }
  if (deps.search) await purgeProjectSearchRows(deps.search, id);
  return { registered, ...rows, files };
}

/**
 * Registers the project this process is configured with, at its start: its project file
 * (PROJECT_CONFIG) is written when the registry holds another version of it; without one, the
 * default project is added when absent, and one put with `userctl projects` is left as it is.
 */
export async function registerConfiguredProject(
  pool: Pool,
  box: SecretBox,
  config: Pick<ServiceConfig, 'project' | 'projectDocument'>,
): Promise<void> {
  const { id, domain } = config.project;
  const document = config.projectDocument ?? { id, domain };
  await withTransaction(pool, async (client) => {
    await lockProject(client, id);
    const stored = await findProject(client, id);
    if (stored && (!config.projectDocument || isDeepStrictEqual(box.open(stored.document), document))) return;
    const other = await projectOfDomain(client, domain, id);
    if (other) throw new ConfigError(`PROJECT_CONFIG: domain ${domain} is already project ${other}'s`);
    await writeProject(client, {
      id,
      domain,
      document: box.seal(document),
      runningTasksLimit: config.project.limits.runningTasks ?? null,
    });
    await moveRevision(client);
  });
}
