import { type Dispatcher, fetch } from 'undici';
import type { ServiceConfig, WebhookEndpoint } from '../config.js';
import type { Pool } from '../db/pool.js';
import {
  type AttemptAnswer,
  type AttemptOutcome,
  fanOutEvents,
  finishAttempt,
  projectsOfDueDeliveries,
  projectsOfNewEvents,
  type TakenDelivery,
  takeDueDeliveries,
} from '../db/webhook-deliveries.js';
import type { Logger } from '../log.js';
import { networkPolicy, policyDispatcher } from '../network-policy.js';
import { webhookAttempts } from '../operator/metrics.js';
import type { ProjectRegistry } from '../projects/project-registry.js';
import { type RelayLoop, startRelayLoop } from '../relay-loop.js';
import { eventEndpoints } from './endpoints.js';
import { bodySignature, eventBody, SIGNATURE_HEADER } from './event-body.js';
import { nextAttemptAt } from './retry-schedule.js';

/** How often the deliverer looks for events to fan out and deliveries that are due. */
const ROUND_EVERY_MS = 500;
/** Events fanned out per round. */
const FAN_OUT_BATCH = 100;
/** A taken delivery's lease outlasts its request by this much, before another worker may take it. */
const LEASE_MARGIN_SECONDS = 5;

/**
 * Delivers every project's task events to its webhook endpoints (as the registry last read them),
 * at least once each, apart from the tasks: a round fans new events out into deliveries and starts
 * the due ones, at most `webhooks.concurrency` in flight, each bounded by `webhooks.timeoutMs`, so
 * that a slow or dead receiver holds a slot of its own and never a task. Any worker process may
 * deliver any delivery: a delivery is leased while its request is in flight, and one whose worker
 * died is taken again once its lease ran out.
 */
export function startWebhookDelivery(
  pool: Pool,
  config: ServiceConfig,
  projects: Pick<ProjectRegistry, 'get'>,
  log: Logger,
): RelayLoop {
  const { webhooks } = config;
  /** The endpoints of these projects as the deliveries know them; a project not read yet has none. */
  const endpointsOf = (ids: readonly string[]) =>
    ids.flatMap((id) => eventEndpoints(id, projects.get(id)?.webhooks ?? []));
  const leaseSeconds = Math.ceil(webhooks.timeoutMs / 1000) + LEASE_MARGIN_SECONDS;
  const inFlight = new Set<Promise<void>>();
  const dispatcher = policyDispatcher(networkPolicy(webhooks.allowedHosts), webhooks.timeoutMs);

  const deliver = async (taken: TakenDelivery): Promise<void> => {
    const endpoint = projects.get(taken.projectId)?.webhooks.find((e) => e.id === taken.endpointId);
    // Taken a moment before its project dropped the endpoint: tried again while the project has it.
    const answer = endpoint
      ? await post(
          endpoint,
          eventBody({ id: taken.eventId, type: taken.type, payload: taken.payload }, new Date()),
          webhooks.timeoutMs,
          dispatcher,
        )
      : { error: 'endpoint removed from its project', durationMs: 0 };
    const end = outcomeOf(answer, taken, config);
    await finishAttempt(pool, taken, answer, end);
    webhookAttempts.inc({ outcome: end.outcome });
    const fields = {
      event_id: taken.eventId,
      endpoint_id: taken.endpointId,
      attempt: taken.attempt,
      status_code: answer.statusCode,
      error: answer.error,
    };
    if (end.outcome === 'delivered') log.info(fields, 'task event delivered');
    else if (end.outcome === 'retry')
      log.warn(
        { ...fields, next_attempt_at: end.nextAttemptAt },
        'task event not delivered; tried again later',
      );
    else if (end.outcome === 'disabled') log.warn(fields, 'webhook endpoint answered 410 Gone: disabled');
    else log.error(fields, 'task event not delivered; given up');
  };

  const loop = startRelayLoop('webhook delivery round', ROUND_EVERY_MS, log, async () => {
    // Events of a project this process has not read yet wait for it: they are never fanned out
    // to no endpoint.
    const fresh = (await projectsOfNewEvents(pool, FAN_OUT_BATCH)).filter((id) => projects.get(id));
    const fanned = fresh.length > 0 ? await fanOutEvents(pool, fresh, endpointsOf(fresh), FAN_OUT_BATCH) : 0;
    const free = webhooks.concurrency - inFlight.size;
    if (free <= 0) return false;
    const dueOf = await projectsOfDueDeliveries(pool, free);
    const due = dueOf.length > 0 ? await takeDueDeliveries(pool, endpointsOf(dueOf), free, leaseSeconds) : [];
    for (const taken of due) {
      const running: Promise<void> = deliver(taken)
        .catch((err: unknown) => {
          // Its attempt keeps no outcome; the delivery is taken again once its lease ran out.
          log.warn(
            { err, event_id: taken.eventId, endpoint_id: taken.endpointId },
            'could not record a delivery attempt',
          );
        })
        .finally(() => {
          inFlight.delete(running);
          loop.wake();
        });
      inFlight.add(running);
    }
    return fanned === FAN_OUT_BATCH || due.length === free;
  });

  return {
    wake: () => loop.wake(),
    async stop() {
      await loop.stop();
      await Promise.all(inFlight);
      await dispatcher.close();
    },
  };
}

/**
 * POSTs a signed body to the endpoint through the network policy's client: what it answered, or
 * why it did not, and how long it took.
 */
async function post(
  endpoint: WebhookEndpoint,
  body: string,
  timeoutMs: number,
  dispatcher: Dispatcher,
): Promise<AttemptAnswer> {
  const started = performance.now();
  try {
    const res = await fetch(endpoint.url, {
      dispatcher,
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER]: bodySignature(endpoint.secret, body),
      },
      // A redirect is an answer like any other that is not 2xx: the body is not sent on elsewhere.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => {});
    return { statusCode: res.status, durationMs: performance.now() - started };
  } catch (err) {
    return { error: failureOf(err, timeoutMs), durationMs: performance.now() - started };
  }
}

/**
 * Why a request got no answer, in words of the service's own: an error's code, never its message
 * (which may quote the URL, and with it a token of the receiver's).
 */
function failureOf(err: unknown, timeoutMs: number): string {
  if ((err as Error).name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const code = ((err as Error).cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'request failed';
}

/** What an answer makes of the delivery: 2xx delivered, 410 disabled, else tried again or given up. */
function outcomeOf(answer: AttemptAnswer, taken: TakenDelivery, config: ServiceConfig): AttemptOutcome {
  const status = answer.statusCode;
  if (status !== undefined && status >= 200 && status < 300) return { outcome: 'delivered' };
  if (status === 410) return { outcome: 'disabled' };
  const next = nextAttemptAt(taken.attempt, taken.createdAt, new Date(), config.webhooks);
  return next ? { outcome: 'retry', nextAttemptAt: next } : { outcome: 'failed' };
}
