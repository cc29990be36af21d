import pg from 'pg';
import { serviceUnavailable } from '../errors.js';

/** What the query modules need of a connection or pool: keeps pg's types at the edge. */
export type Queryable = Pick<pg.Pool, 'query'>;

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** Options of a pool; `schema` puts every connection's search_path in one schema (tests use one each). */
export interface PoolOptions {
  readonly connectionString: string;
  readonly schema?: string;
  readonly max?: number;
  /** Postgres's statement_timeout on every connection; none when absent. */
  readonly statementTimeoutMs?: number;
  /** lock_timeout: a statement that waits this long for a lock fails (55P03, retried as transient). */
  readonly lockTimeoutMs?: number;
  /** idle_in_transaction_session_timeout: a session idle this long inside a transaction is ended. */
  readonly idleInTransactionTimeoutMs?: number;
  /** How long a query waits for a connection; `CONNECT_TIMEOUT_MS` when absent. */
  readonly connectTimeoutMs?: number;
  /** TCP keepalive after this long idle; none when absent or 0. */
  readonly keepaliveSeconds?: number;
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
  const pool = new ServicePool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.lockTimeoutMs ? { lock_timeout: options.lockTimeoutMs } : {}),
    ...(options.idleInTransactionTimeoutMs
      ? { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs }
      : {}),
    ...(options.keepaliveSeconds
      ? { keepAlive: true, keepAliveInitialDelayMillis: options.keepaliveSeconds * 1000 }
      : {}),
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const report = options.onConnectionError ?? (() => {});
  // An idle client's error reaches its own listener and then the pool's: report it once.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', report));
  return pool;
}

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A pool whose failures to hand out a connection say what they mean. pg-pool fails with a bare
 * Error, without a code, when no connection frees up in time (every one busy) or the server ends
 * one while it is made: both are the database being unavailable for now (503, a transient fault),
 * not a bug. Errors that carry a code already say so, and pass as they are.
 */
class ServicePool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    if (!callback) return super.connect().catch((err: Error) => Promise.reject(unavailable(err)));
    // pg's callback type differs from ConnectCallback only in how optional its members are.
    const wrapped: ConnectCallback = (err, client, done) => callback(err && unavailable(err), client, done);
    super.connect(wrapped as never);
    return undefined;
  }
}

function unavailable(err: Error): Error {
  return (err as { code?: unknown }).code === undefined ? serviceUnavailable('database', err) : err;
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
