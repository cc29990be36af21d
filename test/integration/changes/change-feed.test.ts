import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { withTransaction } from '../../../pipeline/db/transaction.js';
import { sweepChangeLog } from '../../../pipeline/db/user-change-log.js';
import { adminClient, adminToken, TEST_DOMAIN, testApp, testConfig } from '../../support/admin-api.js';
import { type FeedEvent, readFeed } from '../../support/changes.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

const FEED = '/_api/admin/users/changes';

describe('change feed over HTTP', function () {
  this.timeout(60_000);
  const db = useTestSchema();
  let keys: Awaited<ReturnType<typeof import('../../support/admin-api.js').makeTestKeys>>;
  let config: ReturnType<typeof testConfig>;

  before(async () => {
    const { makeTestKeys } = await import('../../support/admin-api.js');
    keys = await makeTestKeys();
    config = testConfig(keys);
  });

  const client = () => adminClient(config, db, keys);
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await client().request({ method: 'GET', url, token: await adminToken(keys), headers });
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
  };
  const feedEnd = async () => (await get(`${FEED}?wait=0`)).body.next_cursor as string;
  // In one transaction: one event.
  const newUser = (email: string, project = config.project) =>
    withTransaction(db(), (c) => createUser(c, project, { email }));

  it('captures each kind of change, by plain SQL too, as one event of the user per transaction', async () => {
    const start = await feedEnd();
    const id = await newUser('kinds@example.com');
    await db().query(`INSERT INTO roles (id, key, project_id) VALUES (gen_random_uuid(), 'r1', $1)`, [
      config.project.id,
    ]);
    await db().query(`INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM roles WHERE key = 'r1'`, [
      id,
    ]);
    await db().query(`UPDATE roles SET key = 'renamed' WHERE key = 'r1'`);
    await db().query(`UPDATE identities SET claims = '{"x": 1}' WHERE user_id = $1`, [id]);
    await db().query(
      `INSERT INTO authenticators (id, user_id, kind, type, totp_secret)
       VALUES (gen_random_uuid(), $1, 'secondary', 'totp', 'JBSWY3DPEHPK3PXP')`,
      [id],
    );
    await withTransaction(db(), async (c) => {
      await c.query(`INSERT INTO groups (id, key, project_id) VALUES (gen_random_uuid(), 'g1', $1)`, [
        config.project.id,
      ]);
      await c.query(
        `INSERT INTO user_groups (user_id, group_id) SELECT $1, id FROM groups WHERE key = 'g1'`,
        [id],
      );
    });
    await db().query(`UPDATE users SET account_valid_until = now() + interval '1 day' WHERE id = $1`, [id]);
    await db().query('DELETE FROM users WHERE id = $1', [id]);

    const { events } = await readFeed(client(), keys, start);
    expect(events.map((e) => e.user_id)).to.deep.equal(Array(8).fill(id));
    expect(new Set(events.map((e) => e.id)).size, 'each with an id of its own').to.equal(8);
    // Read after the deletion, each event says the user is gone: a consumer never brings it back.
    expect(events.map((e) => e.type)).to.deep.equal(Array(8).fill('user.deleted'));
    expect(events.every((e) => e.record === undefined)).to.equal(true);
  });

  it('names an event created or updated with the record as the ndjson export writes it', async () => {
    const start = await feedEnd();
    const id = await newUser('shape@example.com');
    await db().query(`UPDATE users SET is_disabled = true WHERE id = $1`, [id]);
    const { events } = await readFeed(client(), keys, start);
    expect(events.map((e) => e.type)).to.deep.equal(['user.created', 'user.updated']);
    const [created] = events as [FeedEvent];
    expect(created.user_id).to.equal(id);
    expect(Date.parse(created.occurred_at)).to.be.closeTo(Date.now(), 60_000);
    expect(created.record).to.deep.include({ sub: id, email: 'shape@example.com', disabled: true });
    expect(created.record).to.not.have.property('password');
  });

  it('waits for an event when there is none (a long poll), and answers it as it commits', async () => {
    const start = await feedEnd();
    const waiting = get(`${FEED}?after=${start}&wait=20`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const id = await newUser('waited@example.com');
    const page = await waiting;
    expect(page.status).to.equal(200);
    expect((page.body.events as FeedEvent[]).map((e) => e.user_id)).to.deep.equal([id]);
  });

  it('refuses a cursor it did not hand out, and limits and waits out of bounds, naming them', async () => {
    const bad = await get(`${FEED}?after=bm90LWEtY3Vyc29y`);
    expect(bad.status).to.equal(400);
    expect((bad.body.error as { reason: string }).reason).to.equal('ChangesCursorInvalid');
    const ahead = Buffer.from('99999999999.00000000-0000-0000-0000-000000000000').toString('base64url');
    const past = await get(`${FEED}?after=${ahead}`);
    expect(past.status, 'a cursor past the feed').to.equal(400);
    expect((past.body.error as { reason: string }).reason).to.equal('ChangesCursorInvalid');
    const limit = await get(`${FEED}?limit=1001`);
    expect(limit.status).to.equal(400);
    expect((limit.body.error as { message: string }).message).to.include('1000');
    const wait = await get(`${FEED}?wait=31`);
    expect(wait.status).to.equal(400);
    expect((wait.body.error as { message: string }).message).to.include('30');
  });

  it('answers 410 for a cursor older than the retention, and keeps a newer one', async () => {
    const old = await feedEnd();
    await newUser('old@example.com');
    const middle = await feedEnd();
    await newUser('kept@example.com');
    await db().query(
      `UPDATE user_change_log SET occurred_at = now() - interval '2 minutes'
        WHERE user_id = (SELECT id FROM users WHERE standard_attributes->>'email' = 'old@example.com')`,
    );
    expect(await sweepChangeLog(db(), 60)).to.be.greaterThan(0);
    const expired = await get(`${FEED}?after=${old}&wait=0`);
    expect(expired.status).to.equal(410);
    expect((expired.body.error as { reason: string }).reason).to.equal('ChangesCursorExpired');
    const kept = await get(`${FEED}?after=${middle}&wait=0`);
    expect(kept.status).to.equal(200);
    expect((kept.body.events as FeedEvent[]).map((e) => e.record?.email)).to.deep.equal(['kept@example.com']);
  });

  it("never shows another project's events, though they share the log", async () => {
    const other = testConfig(keys, { id: 'other', domain: 'other.test.example' });
    const otherClient = adminClient(other, db, keys);
    const read = async (c: typeof otherClient, host: string, after: string) => {
      const res = await c.request({
        method: 'GET',
        url: `${FEED}?after=${after}&wait=0`,
        token: await adminToken(keys),
        host,
      });
      return JSON.parse(res.body) as { events: FeedEvent[]; next_cursor: string };
    };
    const mine = await feedEnd();
    const theirs = (await read(otherClient, 'other.test.example', '')).next_cursor;
    const own = await newUser('mine@example.com');
    const foreign = await newUser('theirs@example.com', other.project);
    expect((await read(client(), TEST_DOMAIN, mine)).events.map((e) => e.user_id)).to.deep.equal([own]);
    expect(
      (await read(otherClient, 'other.test.example', theirs)).events.map((e) => e.user_id),
    ).to.deep.equal([foreign]);
  });

  describe('as Server-Sent Events', () => {
    let server: Server;
    let base: string;
    before(async () => {
      // Reached at 127.0.0.1: the project of that Host (fetch sends the URL's).
      const local = testConfig(keys, { domain: '127.0.0.1' });
      server = createServer(testApp(local, db(), keys).callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    /** Reads the stream until `count` events came, then drops the connection. */
    const readEvents = async (from: { after?: string; lastEventId?: string }, count: number) => {
      const controller = new AbortController();
      const res = await fetch(`${base}${FEED}${from.after ? `?after=${from.after}` : ''}`, {
        headers: {
          accept: 'text/event-stream',
          authorization: `Bearer ${await adminToken(keys)}`,
          ...(from.lastEventId ? { 'last-event-id': from.lastEventId } : {}),
        },
        signal: controller.signal,
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.include('text/event-stream');
      const events: { id: string; event: FeedEvent }[] = [];
      const decoder = new TextDecoder();
      let text = '';
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      while (events.length < count) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        let end = text.indexOf('\n\n');
        while (end >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id && data) events.push({ id, event: JSON.parse(data) as FeedEvent });
          end = text.indexOf('\n\n');
        }
      }
      controller.abort();
      return events.slice(0, count);
    };

    it('resumes after a dropped connection with Last-Event-ID, nothing lost or repeated', async () => {
      const start = await feedEnd();
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await newUser(`sse${i}@example.com`));
      const first = await readEvents({ after: start }, 2);
      const rest = await readEvents({ lastEventId: (first.at(-1) as { id: string }).id }, 4);
      expect([...first, ...rest].map((e) => e.event.user_id)).to.deep.equal(ids);
      const json = await readFeed(client(), keys, start);
      expect([...first, ...rest].map((e) => e.event.id)).to.deep.equal(json.events.map((e) => e.id));
    });

    it('answers an expired or invalid cursor with its error, not a stream', async () => {
      const res = await fetch(`${base}${FEED}?after=bm90LWEtY3Vyc29y`, {
        headers: {
          accept: 'text/event-stream',
          authorization: `Bearer ${await adminToken(keys)}`,
        },
      });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as { error: { reason: string } }).error.reason).to.equal(
        'ChangesCursorInvalid',
      );
    });
  });
});
