import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { inject, type Response } from 'light-my-request';
import { createApp } from '../../api/app.js';
import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { configFromDocument, type ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { createLogger, type Logger } from '../../pipeline/log.js';
import type { UserSearchIndex } from '../../pipeline/search/user-search.js';
import { secretBox } from '../../pipeline/tasks/task-secrets.js';

export const TEST_ORIGIN = 'https://admin.test.example';

/** The key sealing the secrets of stored imports in this test run (given to worker processes too). */
export const TEST_SECRETS_KEY = randomBytes(32).toString('base64');
export const TEST_SECRETS = secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64'));
export const TEST_DOMAIN = 'admin.test.example';

/** A key pair for signing test admin tokens; its public half is the project's JWKS. */
export interface TestKeys {
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  readonly publicJwk: JWK;
}

export async function makeTestKeys(alg = 'RS256'): Promise<TestKeys> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'test', alg } };
}

/** A service configuration for tests: the given project settings over the test domain and keys. */
export function testConfig(
  keys: TestKeys,
  project: Record<string, unknown> = {},
  settings: Record<string, unknown> = {},
): ServiceConfig {
  return configFromDocument({
    log_level: 'silent',
    task_secrets_key: TEST_SECRETS_KEY,
    ...settings,
    project: {
      domain: TEST_DOMAIN,
      public_origin: TEST_ORIGIN,
      admin_api: { jwks: { keys: [keys.publicJwk] } },
      ...project,
    },
  });
}

/** Signs an admin JWT; `claims` and `header` override the valid defaults. */
export async function adminToken(
  keys: TestKeys,
  options: { audience?: string; expiresIn?: string | number; alg?: string } = {},
): Promise<string> {
  const jwt = new SignJWT({ sub: 'admin' })
    .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: 'test' })
    .setAudience(options.audience ?? TEST_ORIGIN)
    .setIssuedAt();
  if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
  else jwt.setExpirationTime('5m');
  return jwt.sign(keys.privateKey);
}

/** The facade driven through its request callback, without opening a port. */
export interface AdminClient {
  request(options: {
    method: 'GET' | 'POST' | 'PUT' | 'DELETE';
    url: string;
    token?: string | undefined;
    host?: string;
    body?: unknown;
    headers?: Record<string, string>;
  }): Promise<Response>;
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<GraphQLResponse>;
}

export interface GraphQLResponse {
  readonly status: number;
  readonly data: Record<string, unknown> | null | undefined;
  readonly errors:
    | readonly { message: string; extensions?: Record<string, unknown>; path?: string[] }[]
    | undefined;
}

/** The facade's Koa app of `config` on `db`, as main.ts builds it, with the test's keys and secrets. */
export function testApp(
  config: ServiceConfig,
  db: Pool,
  keys: TestKeys,
  options: {
    taskCreated?: () => void;
    blobs?: BlobStorage | undefined;
    search?: UserSearchIndex | undefined;
    log?: Logger;
  } = {},
): ReturnType<typeof createApp> {
  return createApp({
    config,
    db,
    secrets: TEST_SECRETS,
    taskCreated: options.taskCreated ?? (() => {}),
    blobs: options.blobs,
    adminJwks: { keys: [keys.publicJwk] },
    log: options.log ?? createLogger('silent'),
    search: options.search && (() => options.search as UserSearchIndex),
  });
}

/**
 * The facade of `config` on `db`. `taskCreated` is told of each task recorded (a test's upkeep
 * relays its message then); without it, messages wait in the outbox.
 */
export function adminClient(
  config: ServiceConfig,
  db: () => Pool,
  keys: TestKeys,
  taskCreated: () => void = () => {},
  blobs?: () => BlobStorage | undefined,
  search?: UserSearchIndex,
  log: Logger = createLogger('silent'),
): AdminClient {
  let callback: ReturnType<ReturnType<typeof createApp>['callback']> | undefined;
  const handler = () => {
    callback ??= testApp(config, db(), keys, { taskCreated, blobs: blobs?.(), search, log }).callback();
    return callback;
  };
  const client: AdminClient = {
    async request({ method, url, token, host = TEST_DOMAIN, body, headers = {} }) {
      return inject(handler(), {
        method,
        url,
        headers: {
          host,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined
            ? {}
            : { 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json' }),
          ...headers,
        },
        ...(body === undefined
          ? {}
          : { payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
      });
    },
    async graphql(query, variables = {}, token) {
      const res = await client.request({
        method: 'POST',
        url: '/_api/admin/graphql',
        token: token ?? (await adminToken(keys)),
        body: { query, variables },
      });
      const parsed = JSON.parse(res.body) as Omit<GraphQLResponse, 'status'>;
      return { status: res.statusCode, data: parsed.data, errors: parsed.errors };
    },
  };
  return client;
}

/** The `id` of a user object in GraphQL data, or null when the field is null or absent. */
export function idOf(res: GraphQLResponse, field: string): string | null {
  const user = res.data?.[field] as { id?: string } | null | undefined;
  return user?.id ?? null;
}
