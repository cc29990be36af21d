import pg from 'pg';

/** What the query modules need of a connection or pool: keeps pg's types at the edge. */
export type Queryable = Pick<pg.Pool, 'query'>;

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** Options of a pool; `schema` puts every connection's search_path in one schema (tests use one each). */
export interface PoolOptions {
  readonly connectionString: string;
  readonly schema?: string;
  readonly max?: number;
  /** Told of every connection that breaks (a server restart, a failover, pg_terminate_backend). */
  readonly onConnectionError?: (err: Error) => void;
}

/** How long a query waits for a free connection (or a new one) before it fails, rather than forever. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens a pool; connections are made lazily. A connection that breaks emits 'error' on its
 * client, checked out or idle, and an 'error' event nobody listens to ends the process: every
 * client gets a listener when it is made, so a broken connection only fails the query in flight
 * (which its caller handles) and is dropped.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const report = options.onConnectionError ?? (() => {});
  // An idle client's error reaches its own listener and then the pool's: report it once.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', report));
  return pool;
}

/**
 * Runs `work` on a client of its own. A client whose work failed is discarded, not put back: a
 * COPY cut short leaves it in an unknown state.
 */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: unknown;
  try {
    return await work(client);
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    client.release(failed instanceof Error ? failed : undefined);
  }
}
