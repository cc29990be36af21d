import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Kafka } from 'kafkajs';
import { userEventsTopic } from '../../../pipeline/changes/publish-changes.js';
import { adminToken } from '../../support/admin-api.js';
import { type FeedEvent, importEndpoints, readFeed } from '../../support/changes.js';
import { eventually } from '../../support/eventually.js';
import { testKafkaBrokers } from '../../support/kafka.js';
import { putTestProject, useTaskService } from '../../support/task-service.js';
import { type ReceivedEvent, signatureVerifies, WebhookReceiver } from '../../support/webhook-receiver.js';

const SECRET = 'a-signing-secret-of-the-change-endpoint';

/** A message of the user-events topic: its key, its project header, the event. */
interface TopicMessage {
  readonly key: string;
  readonly project: string;
  readonly event: FeedEvent;
}
const OTHER_SECRET = 'a-signing-secret-of-the-other-project';

/**
 * The feed's three readers carry the same events: the HTTP feed, the deployment's Kafka topic
 * `<prefix>user-events` (keyed by project and user) and a webhook endpoint that subscribes to the
 * user events (signed as task events are).
 */
describe('change feed on Kafka and webhooks', function () {
  this.timeout(120_000);
  const receiver = new WebhookReceiver();
  before(() => receiver.start());
  after(() => receiver.stop());
  const service = useTaskService('kafka', {
    project: {
      webhooks: [
        {
          id: 'changes',
          url: receiver.url('/changes'),
          secret: SECRET,
          events: ['user.created', 'user.updated', 'user.deleted'],
        },
        { id: 'tasks', url: receiver.url('/tasks'), secret: SECRET, events: ['user_import.completed'] },
      ],
    },
    settings: { trust_proxy: true, webhook_allowed_hosts: '127.0.0.1', changes_kafka_topic: true },
  });
  const imports = importEndpoints(service.client, service.keys);
  /** The messages of the deployment's user-events topic from its start, read until `done` holds of them. */
  const readUserEvents = async (
    done: (messages: readonly TopicMessage[]) => boolean,
  ): Promise<TopicMessage[]> => {
    const kafka = new Kafka({ clientId: 'test-user-events', brokers: testKafkaBrokers(), logLevel: 0 });
    const consumer = kafka.consumer({ groupId: `test-user-events-${randomUUID()}` });
    const messages: TopicMessage[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({
        topic: userEventsTopic(service.config().kafkaTopicPrefix),
        fromBeginning: true,
      });
      await consumer.run({
        eachMessage: async ({ message }) => {
          messages.push({
            key: String(message.key),
            project: String(message.headers?.project),
            event: JSON.parse(String(message.value)) as FeedEvent,
          });
        },
      });
      await eventually(async () => messages, done, 60);
    } finally {
      await consumer.disconnect();
    }
    return messages;
  };
  /** A user of `project` written with plain SQL, as another component of the platform writes one. */
  const insert = async (project: string, email: string) =>
    (
      await service
        .db()
        .query<{ id: string }>(
          `INSERT INTO users (id, project_id, standard_attributes) VALUES (gen_random_uuid(), $1, jsonb_build_object('email', $2::text)) RETURNING id`,
          [project, email],
        )
    ).rows[0]?.id as string;

  it('publishes each event of the HTTP feed once to the topic and to the endpoint that wants it', async () => {
    // Each publication starts at the feed's end when it is first leased.
    const publications = await eventually(
      async () => (await service.db().query('SELECT name FROM user_change_publications')).rowCount,
      (n) => n === 2,
    );
    expect(publications).to.equal(2);
    const startRes = await service.client().request({
      method: 'GET',
      url: '/_api/admin/users/changes?wait=0',
      token: await adminToken(service.keys()),
    });
    const start = (JSON.parse(startRes.body) as { next_cursor: string }).next_cursor;

    await imports.run({
      identifier: 'email',
      records: Array.from({ length: 30 }, (_, i) => ({ email: `p${i}@example.com`, name: `n${i}` })),
    });
    await service
      .db()
      .query(`UPDATE users SET is_disabled = true WHERE standard_attributes->>'email' = 'p1@example.com'`);
    await service.db().query(`DELETE FROM users WHERE standard_attributes->>'email' = 'p2@example.com'`);
    const feed = await readFeed(service.client(), service.keys(), start);
    expect(feed.events).to.have.length(32);

    const topic = await readUserEvents((messages) => messages.length >= 32);
    const project = service.config().project.id;
    expect(topic.map((m) => m.event.id).sort()).to.deep.equal(feed.events.map((e) => e.id).sort());
    for (const m of topic) {
      expect(m.key).to.equal(`${project}/${m.event.user_id}`);
      expect(m.project).to.equal(project);
    }
    const disabled = topic.find((m) => m.event.type === 'user.updated');
    expect(disabled?.event.record).to.deep.include({ email: 'p1@example.com', disabled: true });

    const delivered = await eventually(
      async () => receiver.received.filter((r) => r.path === '/changes'),
      (r) => r.length >= 32,
      60,
    );
    const bodies = delivered.map(
      (r) => JSON.parse(r.body) as { id: string; type: string; payload: FeedEvent & { project_id: string } },
    );
    expect(bodies.map((b) => b.payload.id).sort()).to.deep.equal(feed.events.map((e) => e.id).sort());
    expect(new Set(bodies.map((b) => b.id)).size, 'one delivery per event').to.equal(32);
    for (const [n, body] of bodies.entries()) {
      expect(body.type).to.equal(body.payload.type);
      expect(body.payload.project_id).to.equal(project);
      expect(signatureVerifies(delivered[n] as (typeof delivered)[number], SECRET)).to.equal(true);
    }
    expect(new Set(bodies.map((b) => b.payload.user_id)).size, 'every user').to.equal(30);
    // A record is read when its event is published: the deleted user's events say it is gone.
    const deleted = feed.events.find((e) => e.type === 'user.deleted')?.user_id;
    expect(bodies.filter((b) => b.payload.user_id === deleted).map((b) => b.type)).to.include('user.deleted');
    // The endpoint that subscribes to task events only gets no user event.
    expect(
      receiver.received.filter((r) => r.path === '/tasks').map((r) => JSON.parse(r.body).type),
    ).to.not.include('user.created');
  });

  it("tells each project's endpoint of its own users' changes only", async () => {
    await putTestProject(service, {
      id: 'other',
      domain: 'other.changes.test',
      webhooks: [{ id: 'crm', url: receiver.url('/other'), secret: OTHER_SECRET, events: ['user.created'] }],
    });
    // The workers read the new project within a second; its endpoint takes events from then on.
    await sleep(2_000);
    const theirs = await insert('other', 'theirs@example.com');
    const mine = await insert(service.config().project.id, 'mine@example.com');
    const payloads = (path: string) =>
      receiver.received
        .filter((r) => r.path === path)
        .map((r) => JSON.parse(r.body).payload as FeedEvent & { project_id: string });
    await eventually(
      async () => ({ other: payloads('/other'), main: payloads('/changes') }),
      ({ other, main }) => other.some((p) => p.user_id === theirs) && main.some((p) => p.user_id === mine),
      60,
    );
    expect(payloads('/other').map((p) => [p.user_id, p.project_id])).to.deep.equal([[theirs, 'other']]);
    expect(payloads('/changes').map((p) => p.user_id)).to.not.include(theirs);
    const [delivered] = receiver.received.filter((r) => r.path === '/other');
    expect(signatureVerifies(delivered as ReceivedEvent, OTHER_SECRET)).to.equal(true);
  });

  it('publishes the events of a project no longer registered, and goes on past them', async () => {
    // The topic exists once the Kafka publication has started (its first lease).
    await eventually(
      async () =>
        (await service.db().query(`SELECT 1 FROM user_change_publications WHERE name = 'kafka'`)).rowCount,
      (n) => n === 1,
    );
    const ghost = await insert('ghost', 'ghost@example.com');
    const after = await insert(service.config().project.id, 'after-ghost@example.com');
    const mine = `${service.config().project.id}/${after}`;
    const keys = (
      await readUserEvents((messages) => {
        const seen = messages.map((m) => m.key);
        return seen.includes(`ghost/${ghost}`) && seen.includes(mine);
      })
    ).map((m) => m.key);
    expect(keys).to.include.members([`ghost/${ghost}`, mine]);
  });
});
