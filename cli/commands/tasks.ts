import { CliError, EXIT } from '../cli-error.js';
import { type Answer, errorMessage, type ServiceClient } from '../service-client.js';

/** What `userctl tasks` lists: one kind or both, a state, how many, every page or the first. */
export interface TasksOptions {
  readonly kinds: readonly ('import' | 'export')[];
  readonly status?: string | undefined;
  readonly limit: number;
  readonly all: boolean;
  readonly json: boolean;
}

type Task = Record<string, unknown> & { id: string; created_at: string; status: string };
type TaskPage = { tasks: Task[]; next?: string };

/**
 * `userctl tasks`: the project's imports and exports, newest first, as the list endpoints answer
 * them (a page of each kind, or every page with --all), as a table or as JSON lines.
 */
export async function listTasks(client: ServiceClient, options: TasksOptions): Promise<number> {
  const tasks: Task[] = [];
  for (const kind of options.kinds) tasks.push(...(await tasksOf(client, kind, options)));
  tasks.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  const shown = options.all ? tasks : tasks.slice(0, options.limit);
  if (options.json) {
    for (const task of shown) process.stdout.write(`${JSON.stringify(task)}\n`);
  } else {
    process.stdout.write(table(shown));
  }
  return EXIT.ok;
}

async function tasksOf(client: ServiceClient, kind: string, options: TasksOptions): Promise<Task[]> {
  const query = new URLSearchParams({ limit: String(options.limit) });
  if (options.status) query.set('status', options.status);
  let route: string | undefined = `/_api/admin/users/${kind}?${query}`;
  const found: Task[] = [];
  while (route) {
    const answer: Answer<TaskPage> = await client.call<TaskPage>('GET', route);
    if (answer.status !== 200) {
      throw new CliError(
        `cannot list ${kind} tasks (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
      );
    }
    found.push(...answer.body.tasks);
    route = options.all ? answer.body.next : undefined;
  }
  return found;
}

/** One line per task: id, state, creation time, and its progress or outcome. */
function table(tasks: readonly Task[]): string {
  const rows = tasks.map((t) => [t.id, state(t), t.created_at, outcome(t)]);
  const all = [['ID', 'STATE', 'CREATED', 'PROGRESS / OUTCOME'], ...rows];
  const widths = [0, 1, 2].map((c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) => r.map((cell, c) => (c < 3 ? (cell ?? '').padEnd(widths[c] ?? 0) : cell)).join('  '))
    .join('\n')
    .concat('\n');
}

function state(task: Task): string {
  if (task.failed_at) return 'failed';
  return task.status === 'pending' && (task.progress as { processed?: number } | undefined)?.processed
    ? 'running'
    : task.status;
}

function outcome(task: Task): string {
  const progress = task.progress as { processed: number; total: number } | undefined;
  if (progress) return `${progress.processed}/${progress.total}`;
  const error = task.error as { reason?: string; message?: string } | undefined;
  if (error) return `${error.reason}: ${error.message}`;
  const summary = task.summary as Record<string, number> | undefined;
  if (summary)
    return Object.entries(summary)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  if (typeof task.record_count === 'number') return `${task.record_count} records`;
  return '';
}
