import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { isEmbeddedDefault, type ServiceConfig } from '../../pipeline/config.js';
import { devAdminToken } from '../../pipeline/development-keys.js';
import { ApiError } from '../../pipeline/errors.js';

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
  return existsSync(path.join(compiled, 'index.html')) ? compiled : path.join(root, 'dist', 'console');
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
    ctx.body = {
      custom_attributes: [...config.project.customAttributes].map(([name, { type }]) => ({ name, type })),
    };
  });
  router.get('/console/:file', (ctx) => serve(ctx, ctx.params.file ?? ''));

  const development =
    !config.project.adminApi.jwks &&
    !config.adminJwksFile &&
    (isEmbeddedDefault(config) || config.developmentKeys);
  router.post('/console/development-token', async (ctx) => {
    if (!development) throw new ApiError('NotFound', 'no development sign-in here');
    // A request relayed by a proxy on this machine comes from loopback too: it names its client.
    const relayed = ctx.get('X-Forwarded-For') !== '' || ctx.get('Forwarded') !== '';
    if (relayed || !isLoopback(ctx.req.socket.remoteAddress)) {
      throw new ApiError('InvalidAdminJWT', 'the development sign-in answers this machine only');
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: await devAdminToken(config.dataDir, config.project.publicOrigin) };
  });
  return router;
}

function isLoopback(address: string | undefined): boolean {
  return (
    address === '::1' || address?.startsWith('127.') === true || address?.startsWith('::ffff:127.') === true
  );
}
