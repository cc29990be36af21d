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
}

/** Opens a pool; connections are made lazily. */
export function createPool(options: PoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
}

/** Postgres SQLSTATE for a unique constraint violation. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a Postgres error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

const RETRIABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/**
 * Whether an error is the database being unavailable or busy (connection lost, shutting down,
 * out of resources, serialization failure or deadlock): worth retrying the whole task later.
 */
export function isRetriable(err: unknown): boolean {
  const state = sqlState(err);
  if (state) return /^(08|40|53|57)/.test(state);
  return (
    RETRIABLE_NODE_CODES.has(String((err as { code?: unknown })?.code)) ||
    String(err).includes('Connection terminated')
  );
}
