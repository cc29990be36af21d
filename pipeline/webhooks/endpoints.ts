import type { WebhookEndpoint } from '../config.js';
import type { EventEndpoint } from '../db/webhook-deliveries.js';

/**
 * An endpoint's URL as it is recorded and shown: without user info, query or fragment, where a
 * receiver may have put a token of its own.
 */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** A project's endpoints as the deliveries know them (no secret, the URL as shown). */
export function eventEndpoints(projectId: string, endpoints: readonly WebhookEndpoint[]): EventEndpoint[] {
  return endpoints.map((e) => ({ project_id: projectId, id: e.id, url: shownUrl(e.url), events: e.events }));
}
