import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JSONWebKeySet, type JWK, SignJWT } from 'jose';
import { isEmbeddedDefault, type ServiceConfig } from './config.js';

const DEV_KEY_FILE = 'admin-key.json';
const DEV_KEY_ID = 'dev-admin-key';

/** The development key pair's private JWK, kept beside the embedded data. */
export function devKeyFile(dataDir: string): string {
  return path.join(dataDir, DEV_KEY_FILE);
}

/**
 * The deployment's admin JWT public keys, for a project whose file names none: ADMIN_JWKS_FILE,
 * else, on the embedded default or with DEVELOPMENT_KEYS, the development key pair under the data
 * folder (made on first start, so `npm run admin-token` can sign with it), else none. A project's
 * own `admin_api.jwks` is used before them.
 */
export async function deploymentAdminJwks(config: ServiceConfig): Promise<JSONWebKeySet> {
  if (config.adminJwksFile) return JSON.parse(await readFile(config.adminJwksFile, 'utf8')) as JSONWebKeySet;
  // Outside them a key of one host's data folder would sign for every project without keys.
  if (!isEmbeddedDefault(config) && !config.developmentKeys) return { keys: [] };
  const privateJwk = await loadOrCreateDevKey(config.dataDir);
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = privateJwk;
  return { keys: [publicJwk] };
}

/** Reads the development private key, creating it (RS256, file mode 0600) when absent. */
export async function loadOrCreateDevKey(dataDir: string): Promise<JWK> {
  const file = devKeyFile(dataDir);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: DEV_KEY_ID, alg: 'RS256', use: 'sig' };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' }).catch(async (err) => {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  });
  return JSON.parse(await readFile(file, 'utf8')) as JWK;
}

const RUNNING_FILE = 'running-service.json';

/** Where the service running on a data folder answers, and whose audience its tokens name. */
export interface RunningService {
  readonly public_origin: string;
  readonly url: string;
  readonly https_url?: string;
  /** The self-signed certificate of `https_url` (a client's CA file). */
  readonly ca_file?: string;
}

/**
 * Records the service running on this data folder, so that `npm run admin-token` and `userctl` in
 * another terminal (without the service's PORT) find it and sign for the same audience. Returns a
 * function that removes the record when the service stops.
 */
export async function recordRunningService(
  dataDir: string,
  service: RunningService,
): Promise<() => Promise<void>> {
  const file = path.join(dataDir, RUNNING_FILE);
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, JSON.stringify({ ...service, pid: process.pid }));
  return () => rm(file, { force: true });
}

/** The service running on this data folder, if one is. */
export async function runningService(dataDir: string): Promise<RunningService | undefined> {
  try {
    const { pid, ...service } = JSON.parse(await readFile(path.join(dataDir, RUNNING_FILE), 'utf8'));
    process.kill(pid, 0); // throws when that process is gone
    return typeof service.public_origin === 'string' ? (service as RunningService) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An admin JWT signed with the development key pair of a data folder, for the running service's
 * audience (else `fallbackOrigin`), valid one hour.
 */
export async function devAdminToken(dataDir: string, fallbackOrigin: string): Promise<string> {
  const jwk = await loadOrCreateDevKey(dataDir);
  const key = await importJWK(jwk, 'RS256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(jwk.kid ? { kid: jwk.kid } : {}) })
    .setAudience((await runningService(dataDir))?.public_origin ?? fallbackOrigin)
    .setSubject('admin')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
}
