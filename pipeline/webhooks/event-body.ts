import { createHmac } from 'node:crypto';

/** The header that carries a body's signature, as Authgear names it for its hooks. */
export const SIGNATURE_HEADER = 'x-authgear-body-signature';

/** An event as each attempt sends it. */
export interface TaskEvent {
  readonly id: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
}

/**
 * The body of one attempt at delivering an event: the event (its id, the same at every attempt,
 * for a receiver to drop repeats), and the attempt's time in `context.timestamp` (Unix seconds),
 * which the signature covers, for a receiver to refuse a body replayed later.
 */
export function eventBody(event: TaskEvent, now: Date): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    payload: event.payload,
    context: { timestamp: Math.floor(now.getTime() / 1000) },
  });
}

/** The hex HMAC-SHA256 of the body under the endpoint's secret, as Authgear signs hook bodies. */
export function bodySignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
