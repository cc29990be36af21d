import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Context } from 'koa';
import type { IdempotencyKey } from '../pipeline/services/task-requests.js';

/** An Idempotency-Key header: visible ASCII, as the IETF draft's examples (a UUID, a digest). */
const KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * The request's Idempotency-Key (undefined without the header) with the SHA-256 of its parsed body
 * in RFC 8785's canonical form: the same JSON sent again in other spacing or member order is the
 * same request. `refuse` makes the error of a
 * malformed key in the endpoint's own shape.
 */
export function idempotencyKeyOf(
  ctx: Context,
  body: unknown,
  refuse: (message: string) => Error,
): IdempotencyKey | undefined {
  const key = ctx.get('idempotency-key');
  if (!key) return undefined;
  if (!KEY.test(key)) throw refuse('Idempotency-Key must be 1 to 200 visible ASCII characters');
  return {
    key,
    digest: createHash('sha256')
      .update(canonicalize(body) ?? '')
      .digest('base64url'),
  };
}
