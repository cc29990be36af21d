import type { BlobStorage } from './blob/blob-storage.js';
import { openExportStorage } from './blob/open-blob-storage.js';
import type { TaskBus } from './bus/bus.js';
import { createBus } from './bus/create-bus.js';
import { startChangePublications } from './changes/publish-changes.js';
import { projectFromDocument, type ServiceConfig } from './config.js';
import { openDatabase, openReadPool } from './db/open-database.js';
import { createPool, type Pool } from './db/pool.js';
import type { Lifecycle } from './lifecycle.js';
import type { Logger } from './log.js';
import { watchBus, watchTasks, watchWorkers } from './operator/metrics.js';
import { registerConfiguredProject } from './projects/project-admin.js';
import { type ProjectRegistry, startProjectRegistry } from './projects/project-registry.js';
import { openSearchIndex, startSearchFeed } from './search/search-index.js';
import type { UserSearchIndex } from './search/user-search.js';
import { openTaskSecrets, type SecretBox } from './tasks/task-secrets.js';
import { startTaskUpkeep, type TaskUpkeep } from './tasks/task-upkeep.js';
import { startWebhookDelivery } from './webhooks/deliver-events.js';
import { pipelineWorkers, type Workers, workerConnections } from './workers.js';

/** The started parts every service process stands on. */
export interface PipelineParts {
  readonly pool: Pool;
  /** The connections that serve admin requests: each statement bounded by a timeout. */
  readonly requests: Pool;
  readonly bus: TaskBus;
  readonly blobs: BlobStorage | undefined;
  readonly secrets: SecretBox;
  readonly upkeep: TaskUpkeep;
  /** The index behind users(searchKeyword), of one project. */
  readonly searchOf: (projectId: string) => UserSearchIndex;
  /** The deployment's projects, kept current. */
  readonly projects: ProjectRegistry;
  /** With `workers`: the pipeline workers. */
  readonly workers?: Workers;
}

/** Connections of a service process besides its workers' and its requests': task upkeep, search feed, change publications. */
const SERVICE_CONNECTIONS = 6;
/** Connections that serve admin requests. */
const REQUEST_CONNECTIONS = 10;

/**
 * Starts, in order, the database, the export storage, the task secrets, the bus, the task upkeep,
 * the search index and (with `workers`) the pipeline workers, what feeds the search index, the
 * webhook deliveries and the change feed's publications; each is recorded so the process stops them in reverse.
 */
export async function startPipelineParts(
  config: ServiceConfig,
  log: Logger,
  started: Lifecycle['started'],
  { workers }: { workers: boolean },
): Promise<PipelineParts> {
  const connections = SERVICE_CONNECTIONS + (workers ? workerConnections(config.workerConcurrency) : 0);
  const db = await openDatabase(config, log, connections, REQUEST_CONNECTIONS);
  started('database', () => db.close());
  // A pool of its own, so that a slow request never holds a worker's connection, and the timeout
  // that bounds a request never cuts a worker's long statement (an export's COPY).
  const requests = createPool({
    connectionString: db.connectionString,
    max: REQUEST_CONNECTIONS,
    statementTimeoutMs: config.requestStatementTimeoutMs,
    lockTimeoutMs: config.databaseTimeouts.lockMs,
    idleInTransactionTimeoutMs: config.databaseTimeouts.idleInTransactionMs,
    keepaliveSeconds: config.databaseKeepaliveSeconds,
  });
  started('request connections', () => requests.end());
  const storage = await openExportStorage(config, log);
  started('export storage', () => storage.close());
  const secrets = await openTaskSecrets(config);
  await registerConfiguredProject(db.pool, secrets, config);
  const projects = await startProjectRegistry(
    db.pool,
    secrets,
    (document, name) => projectFromDocument(document, name, config),
    log,
  );
  started('projects', async () => projects.stop());
  const bus = createBus(config, db.pool, log);
  started('task bus', () => bus.close());
  const upkeep = startTaskUpkeep(db.pool, bus, storage.blobs, config, log, () => projects.ids());
  started('task upkeep', () => upkeep.stop());
  watchTasks(db.pool);
  watchBus(bus);
  const index = openSearchIndex(config, requests);
  started('search index', () => index.close());
  const parts = {
    pool: db.pool,
    requests,
    bus,
    blobs: storage.blobs,
    secrets,
    upkeep,
    projects,
    searchOf: index.searchOf,
  };
  if (workers) {
    const reads = openReadPool(config, log, config.workerConcurrency);
    if (reads) started('standby connections', () => reads.end());
    const workers = pipelineWorkers({ ...parts, reads, config, log });
    // Stopped before the bus and the upkeep (a released task is offered again by the relay), and
    // also when the process is told to stop while they start.
    started('workers', () => workers.stop());
    watchWorkers(workers.running);
    await workers.start();
    if (index.store) {
      const feed = startSearchFeed(config, db.pool, index.store, log);
      started('search feed', () => feed.stop());
    }
    // One loop for every project's endpoints, whatever their number.
    const delivery = startWebhookDelivery(db.pool, config, projects, log);
    started('webhook delivery', () => delivery.stop());
    const publications = startChangePublications(config, db.pool, projects, log);
    started('change publications', () => publications.stop());
    return { ...parts, workers };
  }
  return parts;
}
