import type { BlobStorage } from '../blob/blob-storage.js';
import type { WebhookConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { TaskRun } from '../tasks/run-task.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import type { FileLine } from './file-lines.js';

/** How a file is taken in: records per frame (an import batch's), its parts, and what it reads with. */
export interface IntakeContext {
  readonly pool: Pool;
  readonly blobs: BlobStorage;
  readonly box: SecretBox;
  readonly run: TaskRun;
  readonly frameRecords: number;
  readonly retentionSeconds: number;
  /** The parts a file of this size is routed to (1: not split). */
  readonly parts: number;
  /** The part of each record, by its identifier, among `parts` (`wrapped`: a converted user's line). */
  readonly route: (parts: number, wrapped: boolean) => (line: FileLine) => number;
  /** The network policy a file named by URL is read under (the webhooks'). */
  readonly webhooks: Pick<WebhookConfig, 'allowedHosts' | 'timeoutMs'>;
}
