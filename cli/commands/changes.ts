import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { CliError, EXIT } from '../cli-error.js';
import { errorMessage, type ServiceClient } from '../service-client.js';

/** What `userctl changes` (or `export --then-follow`) was asked for. */
export interface ChangesOptions {
  /** The cursor to read after; the feed's end now when absent. */
  readonly after?: string | undefined;
  /** Keep reading as changes come, until interrupted; otherwise stop at the feed's end. */
  readonly follow: boolean;
}

interface ChangesPage {
  readonly events: unknown[];
  readonly next_cursor: string;
}

const ROUTE = '/_api/admin/users/changes';
/** How long one read waits for an event while following (the service's bound is 30 s). */
const FOLLOW_WAIT_SECONDS = 25;

/**
 * Writes the project's change events after the cursor to `out`, one JSON line each, in feed
 * order; with `follow`, goes on as changes come until SIGINT or SIGTERM. The cursor to resume from
 * is written to stderr at the end (and after each page while following). A cursor past the feed's
 * retention ends the command (exit 1) telling to export again.
 */
export async function readChanges(
  client: ServiceClient,
  options: ChangesOptions,
  out: Writable = process.stdout,
): Promise<number> {
  let cursor = options.after;
  // Interrupted while waiting for a page: every event written is before the cursor, so the
  // command can end at once.
  const stop = () => {
    process.stderr.write(`changes: resume with --after ${cursor ?? '(none read yet)'}\n`);
    process.exit(EXIT.ok);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for (;;) {
      const query = new URLSearchParams({
        limit: '1000',
        wait: options.follow ? String(FOLLOW_WAIT_SECONDS) : '0',
      });
      if (cursor !== undefined) query.set('after', cursor);
      const answer = await client.call<ChangesPage>('GET', `${ROUTE}?${query}`);
      if (answer.status === 410)
        throw new CliError(
          'changes: the cursor is older than the feed keeps (CHANGES_RETENTION_SECONDS): export again, ' +
            'then follow from its cursor (userctl export ... --then-follow)',
          EXIT.someFailed,
        );
      if (answer.status !== 200)
        throw new CliError(
          `changes: the service refused (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
        );
      for (const event of answer.body.events)
        if (!out.write(`${JSON.stringify(event)}\n`)) await once(out, 'drain');
      cursor = answer.body.next_cursor;
      if (options.follow && answer.body.events.length > 0)
        process.stderr.write(`changes: cursor ${cursor}\n`);
      if (!options.follow && answer.body.events.length === 0) break;
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  process.stderr.write(`changes: resume with --after ${cursor}\n`);
  return EXIT.ok;
}
