import type { ProjectConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { projectsRevision, readProjects } from '../db/projects.js';
import { EngineError } from '../errors.js';
import { keepBeating } from '../keep-alive.js';
import type { Logger } from '../log.js';
import type { SecretBox } from '../tasks/task-secrets.js';

/**
 * The deployment's projects as one process knows them: read from Postgres at start, and read again
 * within a second of a change (`userctl projects put` or `delete` moves the registry's revision).
 * One small statement a second whatever the number of projects: nothing runs per project.
 */
export interface ProjectRegistry {
  /** The project of `id`, or undefined when none is registered. */
  get(id: string): ProjectConfig | undefined;
  /** The project whose domain `host` is (no port; any case), or undefined. */
  byHost(host: string): ProjectConfig | undefined;
  /** The ids of every project. */
  ids(): string[];
  /** Reads the projects again now if they changed. */
  refresh(): Promise<void>;
  stop(): void;
}

/** How often a process looks at the registry's revision. */
const REVISION_POLL_MS = 1_000;

/** Turns a project file's document into the project the service uses (config.ts's rules). */
export type ProjectReader = (document: unknown, name: string) => ProjectConfig;

/** Reads the projects and keeps them current until stopped. */
export async function startProjectRegistry(
  pool: Pool,
  box: SecretBox,
  read: ProjectReader,
  log: Logger,
): Promise<ProjectRegistry> {
  let revision: string | undefined;
  // By id: the sealed document it was read from (an unchanged row is not read again) and the project.
  let byId = new Map<string, { sealed: string; project: ProjectConfig }>();
  let byDomain = new Map<string, ProjectConfig>();

  const reload = async () => {
    const seen = await projectsRevision(pool);
    if (seen === revision) return;
    const next = new Map<string, { sealed: string; project: ProjectConfig }>();
    for (const row of await readProjects(pool)) {
      const known = byId.get(row.id);
      if (known?.sealed === row.document) {
        next.set(row.id, known);
        continue;
      }
      try {
        next.set(row.id, {
          sealed: row.document,
          project: read(box.open(row.document), `project ${row.id}`),
        });
      } catch (err) {
        // A project this process cannot read stays unknown here; the others are served.
        log.error({ err, project_id: row.id }, 'project not loaded');
      }
    }
    byId = next;
    byDomain = new Map([...next.values()].map(({ project }) => [project.domain.toLowerCase(), project]));
    revision = seen;
  };

  // One read at a time: a slower, older read never replaces a newer one.
  let reading: Promise<void> | undefined;
  const refresh = () => {
    reading ??= reload().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  await refresh();
  const poll = keepBeating(
    () =>
      refresh().catch((err: unknown) => log.warn({ err }, 'projects not read again; the last read is used')),
    REVISION_POLL_MS,
  );
  return {
    get: (id) => byId.get(id)?.project,
    ids: () => [...byId.keys()],
    byHost: (host) => byDomain.get(host.toLowerCase()),
    refresh,
    stop: () => poll.stop(),
  };
}

/**
 * The project a task of `id` runs with: read again once when not known yet (it may have been put a
 * moment before its task was accepted); ProjectUnknown when it is not registered.
 */
export async function taskProject(
  projects: Pick<ProjectRegistry, 'get' | 'refresh'>,
  id: string,
): Promise<ProjectConfig> {
  let project = projects.get(id);
  if (!project) {
    await projects.refresh();
    project = projects.get(id);
  }
  if (!project) throw new EngineError('ProjectUnknown', `project ${id} is not registered`);
  return project;
}

/** A registry of the given projects that never changes: a process or test serving one project. */
export function fixedProjects(projects: readonly ProjectConfig[]): ProjectRegistry {
  const byId = new Map(projects.map((p) => [p.id, p]));
  const byDomain = new Map(projects.map((p) => [p.domain.toLowerCase(), p]));
  return {
    get: (id) => byId.get(id),
    ids: () => [...byId.keys()],
    byHost: (host) => byDomain.get(host.toLowerCase()),
    refresh: async () => {},
    stop: () => {},
  };
}
