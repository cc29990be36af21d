import type { WebhookConfig } from '../config.js';

/**
 * When a delivery whose attempt `attempt` (1 for the first) failed is tried again: after the first
 * wait, doubled for each attempt after it up to the longest wait, with up to a tenth more at
 * random so that deliveries that failed together do not come back together. Undefined: the next
 * attempt would come later than the give-up time after the event, and the delivery fails.
 */
export function nextAttemptAt(
  attempt: number,
  eventCreatedAt: Date,
  now: Date,
  config: Pick<WebhookConfig, 'retryFirstMs' | 'retryMaxMs' | 'giveUpSeconds'>,
  random: () => number = Math.random,
): Date | undefined {
  const wait = Math.min(config.retryFirstMs * 2 ** Math.min(attempt - 1, 40), config.retryMaxMs);
  const at = new Date(now.getTime() + wait * (1 + random() / 10));
  return at.getTime() <= eventCreatedAt.getTime() + config.giveUpSeconds * 1000 ? at : undefined;
}
