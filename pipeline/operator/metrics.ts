import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { TaskKind } from '../../schemas/index.js';
import type { TaskBus } from '../bus/bus.js';
import type { Queryable } from '../db/pool.js';
import { countTasksByState } from '../db/tasks/task-rows.js';

/**
 * The process's metrics in the Prometheus format (`/metrics`): what the API and the workers do,
 * counted where it happens, and the state of the tasks read from Postgres at each scrape.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Import records applied, by outcome (inserted, updated, skipped, failed). */
export const importRecords = new Counter({
  name: 'users_import_records_total',
  help: 'Import records applied, by outcome',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Users written into export files. */
export const usersExported = new Counter({
  name: 'users_exported_total',
  help: 'Users written into completed export files',
  registers: [registry],
});

/** Task attempts that gave up their lease because their work made no progress, by task kind. */
export const stalledAttempts = new Counter({
  name: 'users_task_attempts_stalled_total',
  help: 'Task attempts that gave up their lease because their work made no progress',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/** Webhook delivery attempts that ended, by outcome (delivered, retry, failed, disabled). */
export const webhookAttempts = new Counter({
  name: 'users_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts that ended, by outcome',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Admin API requests, by route pattern, method and status. */
export const httpDuration = new Histogram({
  name: 'users_http_request_duration_seconds',
  help: 'Admin API request duration',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

/** Exact-match lookups (one batch statement), by lookup. */
export const lookupDuration = new Histogram({
  name: 'users_lookup_duration_seconds',
  help: 'Exact-match lookup statements (a batch of lookups), by lookup',
  labelNames: ['lookup'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
  registers: [registry],
});

/** From a user's change in Postgres to its row in the search index. */
export const searchLag = new Histogram({
  name: 'users_search_lag_seconds',
  help: 'Time from a change of a user to its row in the search index',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30],
  registers: [registry],
});

let taskSource: Queryable | undefined;

/**
 * Tasks by kind and state (pending, running, completed, failed) and the queue depth (pending
 * tasks no worker has started), read at each scrape from the database given here.
 */
export function watchTasks(db: Queryable): void {
  taskSource = db;
}

const queueDepth = new Gauge({
  name: 'users_task_queue_depth',
  help: 'Tasks waiting for a worker (pending, not started), by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

// One query per scrape sets both gauges: the queue depth is the tasks' `pending` state.
new Gauge({
  name: 'users_tasks',
  help: 'Tasks kept, by kind and state (pending: not started yet; running; completed; failed)',
  labelNames: ['kind', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    queueDepth.reset();
    if (!taskSource) return;
    for (const row of await countTasksByState(taskSource)) {
      this.set({ kind: row.kind, state: row.state }, row.n);
      if (row.state === 'pending') queueDepth.set({ kind: row.kind }, row.n);
    }
  },
});

/** Times `work` into a histogram (with these labels). */
export async function timed<T, L extends string>(
  histogram: Histogram<L>,
  labels: Partial<Record<L, string>>,
  work: () => Promise<T>,
): Promise<T> {
  const end = histogram.startTimer(labels);
  try {
    return await work();
  } finally {
    end();
  }
}

let busSource: TaskBus | undefined;

/** The consumer lag of each kind's workers, per partition, read from the bus given here at each scrape. */
export function watchBus(bus: TaskBus): void {
  busSource = bus;
}

new Gauge({
  name: 'users_task_consumer_lag',
  help: "Task messages a kind's workers have not handled yet, by kind and partition (what to scale workers on)",
  labelNames: ['kind', 'partition'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    if (!busSource) return;
    // A bus that does not answer leaves the gauge empty; the rest of the scrape still answers.
    const lags = await busSource.lag().catch(() => []);
    for (const { kind, partition, lag } of lags) this.set({ kind, partition }, lag);
  },
});

let runningSource: (() => Readonly<Record<TaskKind, number>>) | undefined;

/** The tasks (and export parts) this process's workers run, read at each scrape. */
export function watchWorkers(running: () => Readonly<Record<TaskKind, number>>): void {
  runningSource = running;
}

new Gauge({
  name: 'users_tasks_running_here',
  help: 'Tasks and export parts running in this process, by kind (at most WORKER_CONCURRENCY each)',
  labelNames: ['kind'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (!runningSource) return;
    for (const [kind, n] of Object.entries(runningSource())) this.set({ kind }, n);
  },
});
