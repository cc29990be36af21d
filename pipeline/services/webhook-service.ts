import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import {
  type AttemptListPage,
  type AttemptRow,
  disabledEndpoints,
  enableEndpoint,
  listAttempts,
} from '../db/webhook-deliveries.js';
import { ApiError } from '../errors.js';
import { shownUrl } from '../webhooks/endpoints.js';

export type { AttemptListPage, AttemptRow };

/** A webhook endpoint as an admin sees it: never its secret. */
export interface ShownEndpoint {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  /** When it answered 410 Gone and was disabled; absent while it is enabled. */
  readonly disabled_at?: string;
}

/** What the facade asks of webhooks: the endpoints, enabling one again, the delivery attempts. */
export interface WebhookService {
  endpoints(): Promise<ShownEndpoint[]>;
  /** Enables an endpoint a 410 disabled: events from now on go to it. */
  enable(id: string): Promise<ShownEndpoint>;
  /** A page of the project's delivery attempts, newest first, and whether more follow. */
  attempts(page: AttemptListPage): Promise<{ attempts: AttemptRow[]; more: boolean }>;
}

export function webhookService({ config, pool }: { config: ServiceConfig; pool: Pool }): WebhookService {
  const project = config.project;
  const endpoints = async (): Promise<ShownEndpoint[]> => {
    const disabled = await disabledEndpoints(pool, project.id);
    return project.webhooks.map((e) => {
      const at = disabled.get(e.id);
      return {
        id: e.id,
        url: shownUrl(e.url),
        events: e.events,
        ...(at ? { disabled_at: at.toISOString() } : {}),
      };
    });
  };
  return {
    endpoints,
    async enable(id) {
      if (!project.webhooks.some((e) => e.id === id)) {
        throw new ApiError('WebhookEndpointNotFound', 'no such webhook endpoint');
      }
      await enableEndpoint(pool, project.id, id);
      return (await endpoints()).find((e) => e.id === id) as ShownEndpoint;
    },
    attempts: (page) => listAttempts(pool, project.id, page),
  };
}
