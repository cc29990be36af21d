import Router from '@koa/router';
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { ApiError } from '../../pipeline/errors.js';
import { UPLOAD_BLOCK_BYTES, UPLOAD_BLOCKS } from '../../pipeline/import/file-uploads.js';
import { inFlightLimit } from '../in-flight-limit.js';
import { jsonBody } from '../json-body.js';
import { scopeOf } from '../project-scope.js';
import { requireHttps } from './require-https.js';

/** Blocks one facade process takes in at once: each is held whole (UPLOAD_BLOCK_BYTES) until staged. */
const BLOCKS_IN_FLIGHT = 4;
const UPLOAD_ID = /^upload_[A-Z2-7]{32}$/;

/**
 * Uploads for file imports (docs/file-imports.md): POST .../uploads makes one (a write-only URL of
 * its blob); a client that can reach only this service (the console, whose page may connect to its
 * own origin alone) writes it in blocks through PUT .../blocks/<n> and commits them with POST
 * .../commit.
 */
export function importUploadRoutes(admin: readonly Middleware[]): Router {
  const router = new Router({ prefix: '/_api/admin/users/import/uploads' });
  const blocks = inFlightLimit(BLOCKS_IN_FLIGHT);

  router.post('/', requireHttps, ...admin, async (ctx) => {
    ctx.body = await scopeOf(ctx).imports.newUpload();
  });

  router.put('/:id/blocks/:n', requireHttps, ...admin, blocks, async (ctx) => {
    const id = uploadIdOf(ctx.params.id);
    const n = Number(ctx.params.n);
    if (!/^\d{1,5}$/.test(ctx.params.n ?? '') || n >= UPLOAD_BLOCKS)
      throw new ApiError('BadRequest', `a block number is from 0 to ${UPLOAD_BLOCKS - 1}`);
    const block = await getRawBody(ctx.req, { limit: UPLOAD_BLOCK_BYTES }).catch((err: unknown) => {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new ApiError('RequestEntityTooLarge', `a block is at most ${UPLOAD_BLOCK_BYTES} bytes`, {
          limit: UPLOAD_BLOCK_BYTES,
        });
      throw new ApiError('BadRequest', 'the block was not received whole');
    });
    await scopeOf(ctx).imports.stageUploadBlock(id, n, block);
    ctx.status = 204;
  });

  router.post('/:id/commit', requireHttps, ...admin, jsonBody(1024), async (ctx) => {
    const id = uploadIdOf(ctx.params.id);
    const count = (ctx.request.body as { blocks?: unknown } | undefined)?.blocks;
    if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > UPLOAD_BLOCKS)
      throw new ApiError('ValidationFailed', `blocks must be a whole number from 1 to ${UPLOAD_BLOCKS}`);
    await scopeOf(ctx).imports.commitUpload(id, count as number);
    ctx.status = 204;
  });

  return router;
}

function uploadIdOf(id: string | undefined): string {
  if (!id || !UPLOAD_ID.test(id)) throw new ApiError('BadRequest', 'invalid upload id');
  return id;
}
