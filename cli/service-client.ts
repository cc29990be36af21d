import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher, request } from 'undici';
import { devAdminToken, runningService } from '../pipeline/development-keys.js';
import { CliError } from './cli-error.js';

/** How `userctl` reaches the service: flags first, then the environment, then `make start`'s record. */
export interface ServiceSettings {
  readonly url?: string | undefined;
  readonly token?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly host?: string | undefined;
  readonly caFile?: string | undefined;
  /** The embedded default's data folder (DATA_DIR, default `.data`). */
  readonly dataDir?: string | undefined;
}

/** A JSON answer of the service. */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** Waiting on 429 and 503 stops after this long in all, for one request. */
const MAX_WAIT_MS = 15 * 60_000;
/** A service that cannot be reached is tried this many times, a second apart. */
const CONNECT_ATTEMPTS = 5;

/** The admin API as the command-line client calls it. */
export interface ServiceClient {
  readonly url: string;
  /**
   * Sends a JSON request and returns the JSON answer. 429 and 503 are sent again after their
   * Retry-After; 401/403 and a service that cannot be reached end the command (exit 2).
   */
  call<T>(method: string, route: string, body?: string, headers?: Record<string, string>): Promise<Answer<T>>;
  /** Streams a URL (a signed download URL) as it is: no token, no retries. */
  download(url: string): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

/**
 * Resolves the settings: against `make start` on this machine none are needed (its URL, its
 * certificate and a token minted with its development key come from its data folder).
 */
export async function connect(settings: ServiceSettings): Promise<ServiceClient> {
  const dataDir = path.resolve(settings.dataDir ?? process.env.DATA_DIR ?? '.data');
  const running = await runningService(dataDir);
  const url = (settings.url ?? running?.https_url ?? running?.url ?? 'http://localhost:3000').replace(
    /\/$/,
    '',
  );
  const caFile = settings.caFile ?? (settings.url ? undefined : running?.ca_file);
  const token = await resolveToken(settings, dataDir, running?.public_origin);
  const agent = new Agent({
    connect: caFile ? { ca: await readFile(caFile, 'utf8') } : {},
    keepAliveTimeout: 10_000,
  });
  const base: Record<string, string> = { authorization: `Bearer ${token}` };
  if (settings.host) base.host = settings.host;

  async function send(
    method: string,
    target: string,
    body: string | undefined,
    headers: Record<string, string>,
  ) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await request(target, {
          method: method as Dispatcher.HttpMethod,
          headers: {
            ...base,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body ?? null,
          dispatcher: agent,
        });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        if (attempt >= CONNECT_ATTEMPTS || !isConnectionFault(code)) {
          throw new CliError(`cannot reach ${url}: ${code}`);
        }
        await sleep(1_000 * attempt);
      }
    }
  }

  return {
    url,
    async call<T>(method: string, route: string, body?: string, headers: Record<string, string> = {}) {
      const started = Date.now();
      for (;;) {
        const res = await send(method, `${url}${route}`, body, headers);
        const text = await res.body.text();
        const parsed = text ? safeJson(text) : undefined;
        if (res.statusCode === 401 || res.statusCode === 403) {
          throw new CliError(
            `authentication failed (${res.statusCode}): ${errorMessage(parsed) ?? 'refused'}`,
          );
        }
        if ((res.statusCode === 429 || res.statusCode === 503) && Date.now() - started < MAX_WAIT_MS) {
          await sleep(retryAfterMs(res.headers['retry-after']));
          continue;
        }
        return { status: res.statusCode, body: parsed as T, headers: res.headers };
      }
    },
    download: (target) => request(target, { method: 'GET', dispatcher: agent }),
    close: () => agent.close(),
  };
}

async function resolveToken(
  settings: ServiceSettings,
  dataDir: string,
  origin: string | undefined,
): Promise<string> {
  const direct = settings.token ?? process.env.USERCTL_TOKEN;
  if (direct) return direct.trim();
  const file = settings.tokenFile ?? process.env.USERCTL_TOKEN_FILE;
  if (file) {
    try {
      return (await readFile(file, 'utf8')).trim();
    } catch (err) {
      throw new CliError(`cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code}`);
    }
  }
  if (!origin) {
    throw new CliError('no token: pass --token or --token-file (or USERCTL_TOKEN), or run `make start` here');
  }
  return devAdminToken(dataDir, origin);
}

function isConnectionFault(code: string): boolean {
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT/.test(
    code,
  );
}

function retryAfterMs(header: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 1000;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The message of an error answer: import's `{"error": "..."}` or the envelope's `error.message`. */
export function errorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const { error } = body as { error: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return undefined;
}
