import type { Middleware } from 'koa';
import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { Pool } from '../../pipeline/db/pool.js';
import type { SecretBox } from '../../pipeline/tasks/task-secrets.js';

/** What the import and export routes stand on. */
export interface TaskRouteDependencies {
  readonly config: ServiceConfig;
  readonly pool: Pool;
  /** The export files' storage; undefined when export is disabled. */
  readonly blobs: BlobStorage | undefined;
  /** Seals the secrets of an import request before it is stored. */
  readonly secrets: SecretBox;
  /** Tells the outbox relay a task was just recorded, so its message goes out now. */
  readonly taskCreated: () => void;
  /** Host and admin JWT checks, shared with the other admin routes. */
  readonly admin: readonly Middleware[];
}
