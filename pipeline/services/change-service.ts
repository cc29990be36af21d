import { type ChangesCursor, NO_USER } from '../changes/changes-cursor.js';
import { type ChangesPage, waitForChanges } from '../changes/read-changes.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { changeWatermark } from '../db/user-change-log.js';

/** What the facade asks of the change feed, for one project. */
export interface ChangeService {
  /** The cursor at the feed's end now: the events that follow are changes committed from now on. */
  end(): Promise<ChangesCursor>;
  /** The project's events after `after` (at most `limit`), waiting up to `waitMs` for one. */
  read(after: ChangesCursor, limit: number, waitMs: number, signal: AbortSignal): Promise<ChangesPage>;
}

export function changeService({ config, pool }: { config: ServiceConfig; pool: Pool }): ChangeService {
  const { id, publicOrigin } = config.project;
  return {
    end: async () => ({ txid: await changeWatermark(pool), userId: NO_USER }),
    read: (after, limit, waitMs, signal) =>
      waitForChanges(pool, { scope: id, after, limit, totpIssuer: async () => publicOrigin }, waitMs, signal),
  };
}
