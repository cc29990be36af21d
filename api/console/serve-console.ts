import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { isEmbeddedDefault, type ServiceConfig } from '../../pipeline/config.js';
import { devAdminToken } from '../../pipeline/development-keys.js';
import { ApiError } from '../../pipeline/errors.js';
import { scopeOf } from '../project-scope.js';

/** The console's files, as `npm run build` writes them, with their types. */
const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
} as const;

/**
 * Everything the page may load or call comes from this origin; nothing inline, no frame, no
 * plugin. Downloads are navigations (to the blob store's signed URLs, or to blobs the page makes).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the built console is: beside the compiled service, or under dist/ when run from source. */
export function consoleDirectory(): string {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const compiled = path.join(root, 'console');
  // Run from source, `console/` is the page's source: its bundle is built into dist/console.
  return existsSync(path.join(compiled, 'console.js')) ? compiled : path.join(root, 'dist', 'console');
}

/**
 * GET /console/ and its files, GET /console/project.json (what the screens offer: the project's
 * declared custom attributes, as an admin reads them) and POST /console/development-token: the web
 * console, served by the facade on the origin of the admin API it calls. The development sign-in
 * answers only where the development key signs admin tokens (the embedded default, or
 * DEVELOPMENT_KEYS) and only to a caller on this machine.
 */
export function consoleRoutes(
  config: ServiceConfig,
  admin: readonly Middleware[],
  directory = consoleDirectory(),
): Router {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(FILES)) {
    const file = path.join(directory, name);
    if (existsSync(file)) files.set(name, { body: readFileSync(file), type });
  }
  const router = new Router();
  const serve = (ctx: Context, name: string) => {
    const file = files.get(name);
    if (!file) throw new ApiError('NotFound', 'the console is not built here: run `npm run build`');
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = file.type;
    ctx.body = file.body;
  };
  // The router takes `/console` and `/console/` alike: the page's relative paths need the slash.
  router.get('/console', (ctx) =>
    ctx.path.endsWith('/') ? serve(ctx, 'index.html') : ctx.redirect('/console/'),
  );
  router.get('/console/project.json', ...admin, (ctx) => {
    const { project } = scopeOf(ctx).config;
    ctx.body = {
      custom_attributes: [...project.customAttributes].map(([name, { type }]) => ({ name, type })),
    };
  });
  router.get('/console/:file', (ctx) => serve(ctx, ctx.params.file ?? ''));

  // Behind a proxy every caller may look local: the development sign-in is off there.
  const development =
    !config.project.adminApi.jwks &&
    !config.adminJwksFile &&
    !config.trustProxy &&
    (isEmbeddedDefault(config) || config.developmentKeys);
  router.post('/console/development-token', async (ctx) => {
    if (!development) throw new ApiError('NotFound', 'no development sign-in here');
    if (!fromOwnConsole(ctx, config.project.domain)) {
      throw new ApiError(
        'InvalidAdminJWT',
        'the development sign-in answers its own console on this machine only',
      );
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: await devAdminToken(config.dataDir, config.project.publicOrigin) };
  });
  return router;
}

/** Headers a proxy adds: a request that carries one was relayed, and its client is elsewhere. */
const PROXY_HINTS = ['forwarded', 'x-real-ip', 'via'];

/**
 * Whether a development sign-in comes from the console this process serves, in a browser on this
 * machine: a loopback connection that no proxy relayed; a Host that is the project's domain or a
 * loopback literal (a page of a rebinding domain names its own); and an Origin that is the
 * console's own (or, without one, `Sec-Fetch-Site: same-origin`), so no other page can ask.
 */
function fromOwnConsole(ctx: Context, domain: string): boolean {
  const headers = Object.keys(ctx.headers);
  if (headers.some((h) => h.startsWith('x-forwarded-') || PROXY_HINTS.includes(h))) return false;
  if (!isLoopback(ctx.req.socket.remoteAddress)) return false;
  const host = hostName(ctx.get('Host'));
  if (host === undefined || (host !== domain.toLowerCase() && !LOOPBACK_HOSTS.has(host))) return false;
  const origin = ctx.get('Origin');
  if (origin === '') return ctx.get('Sec-Fetch-Site') === 'same-origin';
  return origin === `${ctx.protocol}://${ctx.get('Host').toLowerCase()}`;
}

/** The loopback literals a Host may name besides the project's domain. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/** The name of a Host header without its port, in lower case; undefined when it is no host. */
function hostName(header: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(header);
  return match?.[1]?.toLowerCase();
}

function isLoopback(address: string | undefined): boolean {
  return (
    address === '::1' || address?.startsWith('127.') === true || address?.startsWith('::ffff:127.') === true
  );
}
