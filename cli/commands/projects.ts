import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { embeddedAzuriteConnectionString } from '../../pipeline/blob/embedded-azurite.js';
import {
  isEmbeddedDefault,
  loadConfig,
  projectFromDocument,
  type ServiceConfig,
} from '../../pipeline/config.js';
import { embeddedConnectionString } from '../../pipeline/db/embedded-postgres.js';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool } from '../../pipeline/db/pool.js';
import { ConfigError } from '../../pipeline/errors.js';
import {
  deleteProject,
  listProjects,
  type ProjectAdminDependencies,
  putProjects,
  showProject,
} from '../../pipeline/projects/project-admin.js';
import { openSearchStore } from '../../pipeline/search/search-store.js';
import { openTaskSecrets } from '../../pipeline/tasks/task-secrets.js';
import { CliError, EXIT } from '../cli-error.js';

export const PROJECTS_USAGE = `  projects put FILE...         create or replace projects from project files, all or none
  projects list [--json]
  projects show ID             its settings (secrets left out) and usage
  projects delete ID [--purge] refused while it has users or tasks; --purge removes them,
                               its files and its search rows
    (projects works on the database: DATABASE_URL and TASK_SECRETS_KEY, no service options)`;

/**
 * `userctl projects`: the deployment's projects, managed in its database with the service's own
 * configuration (DATABASE_URL, or the embedded default's Postgres that `make start` runs).
 */
export async function projects(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv);
  const [action, ...args] = positionals;
  const config = loadConfig();
  const pool = createPool({
    connectionString: config.databaseUrl ?? embeddedConnectionString(config.embeddedPostgresPort),
    max: 2,
  });
  try {
    await migrate(pool, config.project.id).catch((err: Error) => {
      throw new CliError(`cannot reach the database: ${err.message}`);
    });
    const deps: ProjectAdminDependencies = {
      pool,
      box: await openTaskSecrets(config),
      read: (document, name) => projectFromDocument(document, name, config),
      embedded: isEmbeddedDefault(config),
    };
    switch (action) {
      case 'put':
        return await put(deps, args);
      case 'list':
        return await list(deps, values.json);
      case 'show':
        return await show(deps, oneId('show', args));
      case 'delete':
        return await remove(deps, config, oneId('delete', args), values.purge);
      default:
        throw new CliError(`projects needs put, list, show or delete\n${PROJECTS_USAGE}`);
    }
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  } finally {
    await pool.end();
  }
}

/** The options of `projects`: none of the service options, since it reaches the database itself. */
export const PROJECTS_OPTIONS = {
  json: { type: 'boolean', default: false },
  purge: { type: 'boolean', default: false },
} as const;

function parseOptions(argv: readonly string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: PROJECTS_OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals: positionals.slice(1) };
  } catch (err) {
    throw new CliError(`projects: ${(err as Error).message}`);
  }
}

function oneId(action: string, args: readonly string[]): string {
  const [id] = args;
  if (!id || args.length > 1) throw new CliError(`projects ${action} takes one project ID`);
  return id;
}

async function put(deps: ProjectAdminDependencies, files: readonly string[]): Promise<number> {
  if (files.length === 0) throw new CliError('projects put needs at least one project FILE');
  const parsed = await Promise.all(
    files.map(async (name) => {
      try {
        return { name, document: JSON.parse(await readFile(name, 'utf8')) as unknown };
      } catch (err) {
        throw new CliError(`cannot read ${name}: ${(err as Error).message}`);
      }
    }),
  );
  for (const { id, created } of await putProjects(deps, parsed))
    process.stdout.write(`${created ? 'created' : 'replaced'} ${id}\n`);
  return EXIT.ok;
}

async function list(deps: ProjectAdminDependencies, json: boolean): Promise<number> {
  const rows = await listProjects(deps);
  if (json) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return EXIT.ok;
  }
  const width = Math.max(2, ...rows.map((r) => r.id.length));
  process.stdout.write(`${'ID'.padEnd(width)}  DOMAIN\n`);
  for (const r of rows) process.stdout.write(`${r.id.padEnd(width)}  ${r.domain}\n`);
  return EXIT.ok;
}

async function show(deps: ProjectAdminDependencies, id: string): Promise<number> {
  const project = await showProject(deps, id);
  if (!project) throw new CliError(`no project ${id}`);
  process.stdout.write(`${JSON.stringify(project, null, 2)}\n`);
  return EXIT.ok;
}

async function remove(
  deps: ProjectAdminDependencies,
  config: ServiceConfig,
  id: string,
  purge: boolean,
): Promise<number> {
  const settings = config.search.clickhouse;
  const search = purge && settings ? openSearchStore(settings) : undefined;
  try {
    const blobs = purge ? await projectFiles(config) : undefined;
    const deleted = await deleteProject({ ...deps, blobs, search }, id, { purge });
    if (!deleted.registered && !purge) throw new CliError(`no project ${id}`);
    process.stdout.write(
      `${deleted.registered ? 'deleted' : 'no project'} ${id}${
        purge ? `; purged ${deleted.users} users, ${deleted.tasks} tasks, ${deleted.files} files` : ''
      }\n`,
    );
    return EXIT.ok;
  } finally {
    await search?.close();
  }
}

/** The blob store of the project's files: the deployment's, or the one `make start` runs. */
async function projectFiles(config: ServiceConfig): Promise<BlobStorage | undefined> {
  const settings =
    config.export.blobStorage ??
    (config.databaseUrl
      ? undefined
      : { connectionString: embeddedAzuriteConnectionString(config.export.embeddedAzuritePort) });
  if (!settings) return undefined;
  try {
    return await BlobStorage.open(settings, config.export.container);
  } catch (err) {
    throw new CliError(
      `cannot reach the blob storage to remove the project's files: ${(err as Error).message}`,
    );
  }
}
