// The console's only way out: the service's own admin API, REST and GraphQL, with the admin JWT
// the tab keeps in its session storage.

const TOKEN_KEY = 'users-console.token';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token.trim()),
  signOut: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** An answer of the API that is not a success, in words: its reason and message. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${reason}: ${message}`);
  }
}

/** The error of an answer: the envelope's `{error: {reason, message}}` or an import's `{error: "..."}`. */
function problemOf(status: number, body: unknown, retryAfter: string | null): ApiProblem {
  const error = (body as { error?: unknown } | null)?.error;
  const seconds = retryAfter === null ? undefined : Number(retryAfter);
  if (typeof error === 'string') return new ApiProblem(status, 'Invalid', error, seconds);
  if (error && typeof error === 'object') {
    const { reason, message } = error as { reason?: string; message?: string };
    return new ApiProblem(status, reason ?? 'Error', message ?? 'no message', seconds);
  }
  return new ApiProblem(status, `HTTP ${status}`, 'the service answered without an error body', seconds);
}

/** Calls the admin API; throws ApiProblem for any answer but 2xx. */
export async function call<T>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const text = await send(method, path, body, headers);
  return parseJson(text) as T;
}

/** GETs a file of the admin API as text (the results file); throws ApiProblem for any answer but 2xx. */
export function readText(path: string): Promise<string> {
  return send('GET', path);
}

async function send(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const token = session.token();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined
          ? {}
          : { 'Content-Type': body instanceof Blob ? 'application/octet-stream' : 'application/json' }),
        ...headers,
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' || body instanceof Blob ? body : JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiProblem(0, 'Unreachable', `the service did not answer (${(err as Error).message})`);
  }
  const text = await response.text();
  if (!response.ok) throw problemOf(response.status, parseJson(text), response.headers.get('Retry-After'));
  return text;
}

/** JSON text as a value; text that is not JSON as itself; none as null. */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** A GraphQL query's data; its first error as an ApiProblem. */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await call<{ data?: T; errors?: { message: string; extensions?: { reason?: string } }[] }>(
    'POST',
    '/_api/admin/graphql',
    { query, variables },
  );
  const first = answer.errors?.[0];
  if (first) throw new ApiProblem(200, first.extensions?.reason ?? 'GraphQLError', first.message);
  return answer.data as T;
}

/** A task as the status reads and lists answer it. */
export interface Task {
  readonly id: string;
  readonly created_at: string;
  readonly status: 'pending' | 'completed';
  readonly completed_at?: string;
  readonly failed_at?: string;
  readonly error?: { reason: string; message: string };
  readonly progress?: {
    processed: number;
    total: number;
    /** A file import: bytes of its upload taken in, of its size. */
    bytes_read?: number;
    bytes_total?: number;
  };
  readonly summary?: Record<string, number>;
  readonly details?: Detail[];
  readonly details_next?: string;
  /** A completed import's results file (every detail) exists: the console reads it through the API. */
  readonly results_url?: string;
  readonly download_url?: string;
  readonly record_count?: number;
  /** The Idempotency-Key the task was asked for with: names the run its request belongs to. */
  readonly idempotency_key?: string;
}

/** An import record's outcome. */
export interface Detail {
  readonly index: number;
  /** A file import's record of an ndjson or CSV file: its line. */
  readonly line?: number;
  readonly outcome: string;
  readonly user_id?: string;
  readonly record: unknown;
  readonly warnings?: { message: string }[];
  readonly errors?: { reason: string; message: string; info?: Record<string, unknown> }[];
}

/** A task's state in one word: pending, running, completed or failed. */
export function stateOf(task: Task): string {
  if (task.failed_at) return 'failed';
  if (task.status === 'pending') return task.progress?.processed ? 'running' : 'pending';
  return 'completed';
}
