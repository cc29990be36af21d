import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../../pipeline/db/pool.js';
import { type AdminClient, adminToken, type TestKeys } from './admin-api.js';
import { download } from './exports.js';
import { HTTPS } from './imports.js';
import { type TaskEndpoints, taskEndpoints } from './task-endpoints.js';

/** An event of the feed as the HTTP feed answers it. */
export interface FeedEvent {
  readonly id: string;
  readonly type: string;
  readonly user_id: string;
  readonly occurred_at: string;
  readonly record?: Record<string, unknown>;
}

/** Reads pages of the project's feed from `after` until a page with no event; returns every event and the last cursor. */
export async function readFeed(
  client: AdminClient,
  keys: TestKeys,
  after: string,
  { host, limit = 1000 }: { readonly host?: string; readonly limit?: number } = {},
): Promise<{ events: FeedEvent[]; cursor: string }> {
  const events: FeedEvent[] = [];
  let cursor = after;
  for (;;) {
    const res = await client.request({
      method: 'GET',
      url: `/_api/admin/users/changes?after=${cursor}&limit=${limit}&wait=0`,
      token: await adminToken(keys),
      ...(host ? { host } : {}),
    });
    if (res.statusCode !== 200) throw new Error(`the feed answered ${res.statusCode}: ${res.body}`);
    const page = JSON.parse(res.body) as { events: FeedEvent[]; next_cursor: string };
    events.push(...page.events);
    cursor = page.next_cursor;
    if (page.events.length === 0) return { events, cursor };
  }
}

/**
 * Follows the feed from `after` as a consumer does, page after page, until `done` resolves (every
 * writer has finished) and the pages read after it bring nothing more: the events it read, in order.
 * A page's events are kept only once the whole read succeeded, as a consumer keeps them.
 */
export async function followFeed(
  client: AdminClient,
  keys: TestKeys,
  after: string,
  done: Promise<void>,
  { retry = false }: { readonly retry?: boolean } = {},
): Promise<FeedEvent[]> {
  let stopped = false;
  void done.then(() => {
    stopped = true;
  });
  const events: FeedEvent[] = [];
  let cursor = after;
  for (;;) {
    const last = stopped;
    let page: { events: FeedEvent[]; cursor: string };
    try {
      page = await readFeed(client, keys, cursor, { limit: 7 });
    } catch (err) {
      // With `retry`, a read that failed (the database restarting) is read again from the same cursor.
      if (!retry) throw err;
      await sleep(200);
      continue;
    }
    events.push(...page.events);
    cursor = page.cursor;
    if (last) return events;
    await sleep(10);
  }
}

/** The users of an ndjson export file, by id. */
export async function exportedUsers(
  status: Record<string, unknown>,
): Promise<Map<string, Record<string, unknown>>> {
  const file = await download(status.download_url as string);
  const users = new Map<string, Record<string, unknown>>();
  for (const line of file.text.split('\n')) {
    if (line === '') continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    users.set(record.sub as string, record);
  }
  return users;
}

/** Applies the feed's events, in order, to users read from an export: what a consumer does. */
export function applyEvents(
  users: Map<string, Record<string, unknown>>,
  events: readonly FeedEvent[],
): Map<string, Record<string, unknown>> {
  const applied = new Map(users);
  for (const event of events) {
    if (event.type === 'user.deleted') applied.delete(event.user_id);
    else applied.set(event.user_id, event.record as Record<string, unknown>);
  }
  return applied;
}

/** The roles the writers give and take (runWriters), made in the project. */
export async function createWriterRoles(db: Pool, project: string): Promise<void> {
  await db.query(
    `INSERT INTO roles (id, key, project_id) SELECT gen_random_uuid(), k, $1
       FROM unnest(ARRAY['reader', 'writer', 'auditor']) k`,
    [project],
  );
}

/** What the concurrent writers of a convergence round did. */
export interface Writes {
  imports: number;
  roleChanges: number;
  outOfOrder: number;
  deletions: number;
  claims: number;
}

/**
 * The user `$1` of the project `$2`, locked against deletion until the writer's statement ends, or
 * no row once the deletion writer has removed it: a row written for the user then never races the
 * user's deletion into a foreign key error, as the import's own writes never do (they lock the
 * users they change).
 */
const LIVE_USER = 'SELECT id, standard_attributes FROM users WHERE id = $1 AND project_id = $2 FOR KEY SHARE';

/**
 * Runs every kind of writer at once until `stop` resolves, each in a loop with random pauses:
 * imports with upserts (through the service), role links added and removed, pairs of raw SQL
 * transactions where the one that began first commits last, deletions, verified claims.
 */
export async function runWriters(
  db: Pool,
  imports: TaskEndpoints,
  project: string,
  stop: Promise<void>,
  onError: (err: unknown) => void = () => {},
): Promise<Writes> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const writes: Writes = { imports: 0, roleChanges: 0, outOfOrder: 0, deletions: 0, claims: 0 };
  const pause = () => sleep(Math.floor(Math.random() * 30));
  const someUser = async (): Promise<string | undefined> => {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM users WHERE project_id = $1 ORDER BY random() LIMIT 1`,
      [project],
    );
    return rows[0]?.id;
  };
  const loop = async (write: () => Promise<void>) => {
    while (!stopped) {
      try {
        await write();
      } catch (err) {
        onError(err);
      }
      await pause();
    }
  };
  let series = 0;
  await Promise.all([
    loop(async () => {
      const n = ++series;
      await imports.run({
        upsert: true,
        identifier: 'email',
        records: Array.from({ length: 20 }, (_, i) => ({
          email: `u${Math.floor(Math.random() * 400)}@example.com`,
          name: `import ${n}.${i}`,
          roles: Math.random() < 0.5 ? ['reader'] : ['writer', 'reader'],
        })),
      });
      writes.imports++;
    }),
    loop(async () => {
      const user = await someUser();
      if (!user) return;
      if (Math.random() < 0.5)
        await db.query(
          `WITH u AS (${LIVE_USER})
           INSERT INTO user_roles (user_id, role_id)
           SELECT u.id, r.id FROM u, roles r WHERE r.project_id = $2 AND r.key = 'auditor'
               ON CONFLICT DO NOTHING`,
          [user, project],
        );
      else await db.query('DELETE FROM user_roles WHERE user_id = $1', [user]);
      writes.roleChanges++;
    }),
    loop(async () => {
      const [first, second] = [await someUser(), await someUser()];
      if (!first || !second || first === second) return;
      const early = await db.connect();
      const late = await db.connect();
      try {
        await early.query('BEGIN');
        await early.query(
          `UPDATE users SET standard_attributes = standard_attributes || jsonb_build_object('nickname', 'early ' || $2::text)
            WHERE id = $1`,
          [first, String(Math.random())],
        );
        await late.query('BEGIN');
        await late.query(
          `UPDATE users SET standard_attributes = standard_attributes || jsonb_build_object('nickname', 'late ' || $2::text),
                  is_disabled = NOT is_disabled WHERE id = $1`,
          [second, String(Math.random())],
        );
        await late.query('COMMIT');
        await sleep(Math.floor(Math.random() * 200));
        await early.query('COMMIT');
        writes.outOfOrder++;
      } catch (err) {
        await early.query('ROLLBACK').catch(() => {});
        await late.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        early.release();
        late.release();
      }
    }),
    loop(async () => {
      await sleep(100);
      const user = await someUser();
      if (user) await db.query('DELETE FROM users WHERE id = $1', [user]);
      writes.deletions++;
    }),
    loop(async () => {
      const user = await someUser();
      if (!user) return;
      await db.query(
        `WITH u AS (${LIVE_USER})
         INSERT INTO verified_claims (id, user_id, name, value)
         SELECT gen_random_uuid(), id, 'email', standard_attributes->>'email' FROM u
          WHERE standard_attributes ? 'email' ON CONFLICT DO NOTHING`,
        [user, project],
      );
      writes.claims++;
    }),
  ]);
  return writes;
}

/** The import endpoints of a service's facade (through a trusted TLS-terminating proxy). */
export function importEndpoints(client: () => AdminClient, keys: () => TestKeys): TaskEndpoints {
  return taskEndpoints('/_api/admin/users/import', client, keys, HTTPS);
}
