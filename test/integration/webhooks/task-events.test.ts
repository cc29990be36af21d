import { expect } from 'chai';
import { failTask } from '../../../pipeline/db/tasks/endings.js';
import { TASK_ENDINGS } from '../../../pipeline/tasks/task-failure.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { adminToken } from '../../support/admin-api.js';
import { eventually } from '../../support/eventually.js';
import { useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { taskEndpoints } from '../../support/task-endpoints.js';
import { putTestProject } from '../../support/task-service.js';
import { type ReceivedEvent, signatureVerifies, WebhookReceiver } from '../../support/webhook-receiver.js';

const SECRET = 'a-signing-secret-of-the-main-endpoint';
const GONE_SECRET = 'a-signing-secret-of-an-endpoint-that-goes';
const OTHER_SECRET = 'a-signing-secret-of-another-project';

interface Delivery {
  event_id: string;
  event_type: string;
  task_id: string;
  endpoint: string;
  attempt: number;
  outcome: string;
  status_code?: number;
  error?: string;
}

/**
 * Task events reach the project's webhook endpoints: a real HTTP receiver the test starts, signed
 * bodies with a timestamp, at least once (once in the normal case), again after the receiver was
 * down, and never to an endpoint that answered 410; every attempt is listed for admins.
 */
describe('task events to webhook endpoints', function () {
  this.timeout(120_000);
  const receiver = new WebhookReceiver();
  before(() => receiver.start());
  after(() => receiver.stop());
  const service = useExportService('postgres', {
    project: {
      webhooks: [
        {
          id: 'main',
          url: `${receiver.url('/main')}?token=kept-out-of-lists`,
          secret: SECRET,
          events: ['user_import.completed', 'user_export.completed'],
        },
        { id: 'gone', url: receiver.url('/gone'), secret: GONE_SECRET, events: ['user_import.completed'] },
      ],
    },
    settings: {
      trust_proxy: true,
      webhook_retry_first_ms: 200,
      webhook_retry_max_ms: 800,
      webhook_timeout_ms: 2_000,
      webhook_allowed_hosts: '127.0.0.1',
    },
  });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);

  const get = async (url: string) => {
    const res = await service
      .client()
      .request({ method: 'GET', url, token: await adminToken(service.keys()) });
    return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
  };
  const deliveriesOf = async (taskId: string): Promise<Delivery[]> =>
    (await get(`/_api/admin/webhooks/deliveries?task_id=${taskId}`)).body.deliveries as Delivery[];
  const received = (path: string, taskId: string, count = 1): Promise<ReceivedEvent[]> =>
    eventually(
      async () => receiver.eventsOf(path, taskId),
      (events) => events.length >= count,
      60,
    );

  it('tells of an import and an export once each, signed, with a timestamp, the summary and the file', async () => {
    const done = await imports.run({
      identifier: 'email',
      records: [{ email: 'hooked@example.com' }, { email: 'not-an-email' }],
    });
    const [event] = await received('/main?token=kept-out-of-lists', done.id as string);
    const ev = event as ReceivedEvent;
    expect(signatureVerifies(ev, SECRET)).to.equal(true);
    expect(signatureVerifies(ev, GONE_SECRET)).to.equal(false);
    const body = JSON.parse(ev.body) as {
      id: string;
      type: string;
      payload: Record<string, unknown>;
      context: { timestamp: number };
    };
    expect(body.type).to.equal('user_import.completed');
    expect(Math.abs(body.context.timestamp - ev.at.getTime() / 1000)).to.be.below(5);
    expect(body.payload).to.deep.equal({
      task_id: done.id,
      project_id: 'default',
      created_at: done.created_at,
      completed_at: done.completed_at,
      summary: done.summary,
      results_bytes: done.results_bytes,
      results_sha256: done.results_sha256,
    });

    const exported = await service.run({ format: 'ndjson' });
    const [exportEvent] = await received('/main?token=kept-out-of-lists', exported.id as string);
    const exportBody = JSON.parse((exportEvent as ReceivedEvent).body) as { type: string; payload: unknown };
    expect(exportBody.type).to.equal('user_export.completed');
    expect(exportBody.payload).to.deep.equal({
      task_id: exported.id,
      project_id: 'default',
      created_at: exported.created_at,
      completed_at: exported.completed_at,
      record_count: exported.record_count,
      file_bytes: exported.file_bytes,
      file_sha256: exported.file_sha256,
    });

    // Once each: the attempt is recorded as delivered, and no other request came.
    const listed = await eventually(
      () => deliveriesOf(done.id as string),
      (list) => list.some((d) => d.endpoint === 'main' && d.outcome === 'delivered'),
    );
    const main = listed.filter((d) => d.endpoint === 'main');
    expect(main.map((d) => [d.attempt, d.outcome, d.status_code])).to.deep.equal([[1, 'delivered', 200]]);
    expect(receiver.eventsOf('/main?token=kept-out-of-lists', done.id as string)).to.have.length(1);
    const all = (await get('/_api/admin/webhooks/deliveries')).body;
    expect(JSON.stringify(all)).to.not.include('kept-out-of-lists').and.not.include(SECRET);
  });

  it('tells of a task that failed, with its reason', async () => {
    // A pending export no worker was told of, cancelled: it ends failed, by the API's statement.
    const id = newTaskId('export');
    await service
      .db()
      .query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'export', 'default')`, [id]);
    const cancelled = await service.client().request({
      method: 'DELETE',
      url: `/_api/admin/users/export/${id}`,
      token: await adminToken(service.keys()),
    });
    const status = JSON.parse(cancelled.body) as Record<string, unknown>;
    expect(status.failed_at).to.be.a('string');
    const [event] = await received('/main?token=kept-out-of-lists', id);
    expect(JSON.parse((event as ReceivedEvent).body).payload).to.deep.equal({
      task_id: id,
      project_id: 'default',
      created_at: status.created_at,
      completed_at: status.completed_at,
      failed_at: status.failed_at,
      error: status.error,
    });
    expect((status.error as { reason: string }).reason).to.equal('Cancelled');
  });

  it('delivers again after the receiver was down, and the task did not wait for it', async () => {
    await receiver.stop();
    const done = await imports.run({ identifier: 'email', records: [{ email: 'while-down@example.com' }] });
    // The task completed while its event could not be delivered, and the failed attempts are listed.
    const failing = await eventually(
      () => deliveriesOf(done.id as string),
      (list) => list.filter((d) => d.endpoint === 'main' && d.outcome === 'retry').length >= 2,
    );
    expect(failing.find((d) => d.endpoint === 'main')?.error).to.equal('ECONNREFUSED');
    expect(receiver.eventsOf('/main?token=kept-out-of-lists', done.id as string)).to.deep.equal([]);

    await receiver.start();
    const [event] = await received('/main?token=kept-out-of-lists', done.id as string);
    expect(signatureVerifies(event as ReceivedEvent, SECRET)).to.equal(true);
    expect(new Date((event as ReceivedEvent).at).getTime()).to.be.greaterThan(
      new Date(done.completed_at as string).getTime(),
    );
    const listed = await eventually(
      () => deliveriesOf(done.id as string),
      (list) => list.some((d) => d.endpoint === 'main' && d.outcome === 'delivered'),
    );
    const outcomes = listed
      .filter((d) => d.endpoint === 'main')
      .sort((a, b) => a.attempt - b.attempt)
      .map((d) => d.outcome);
    expect(outcomes.at(-1)).to.equal('delivered');
    expect(outcomes.slice(0, -1).every((o) => o === 'retry')).to.equal(true);
    expect(outcomes.length).to.be.greaterThan(2);
  });

  it('disables an endpoint that answers 410, and sends it nothing more until enabled', async () => {
    receiver.answer('/gone', 410);
    const first = await imports.run({ identifier: 'email', records: [{ email: 'gone-1@example.com' }] });
    await received('/gone', first.id as string);
    const endpoints = await eventually(
      async () => (await get('/_api/admin/webhooks/endpoints')).body.endpoints as Record<string, unknown>[],
      (list) => list.some((e) => e.id === 'gone' && e.disabled_at !== undefined),
    );
    expect(endpoints.find((e) => e.id === 'main')).to.deep.equal({
      id: 'main',
      url: receiver.url('/main'),
      events: ['user_import.completed', 'user_export.completed'],
    });
    expect(JSON.stringify(endpoints)).to.not.include(GONE_SECRET);
    const gone = (await deliveriesOf(first.id as string)).filter((d) => d.endpoint === 'gone');
    expect(gone.map((d) => [d.outcome, d.status_code])).to.deep.equal([['disabled', 410]]);

    const second = await imports.run({ identifier: 'email', records: [{ email: 'gone-2@example.com' }] });
    await received('/main?token=kept-out-of-lists', second.id as string);
    expect((await deliveriesOf(second.id as string)).map((d) => d.endpoint)).to.deep.equal(['main']);
    expect(receiver.eventsOf('/gone', second.id as string)).to.deep.equal([]);

    receiver.answer('/gone', 204);
    const enabled = await service.client().request({
      method: 'POST',
      url: '/_api/admin/webhooks/endpoints/gone/enable',
      token: await adminToken(service.keys()),
    });
    expect(enabled.statusCode).to.equal(200);
    expect(JSON.parse(enabled.body)).to.not.have.property('disabled_at');
    const third = await imports.run({ identifier: 'email', records: [{ email: 'gone-3@example.com' }] });
    const [back] = await received('/gone', third.id as string);
    expect(signatureVerifies(back as ReceivedEvent, GONE_SECRET)).to.equal(true);
  });

  it("tells each project's endpoints of its own tasks only", async () => {
    // A second project of the deployment, put as `userctl projects put` puts it: the running
    // workers read it within a second, and deliver to its endpoint with its secret.
    await putTestProject(service, {
      id: 'other',
      domain: 'other.webhooks.test',
      webhooks: [
        { id: 'crm', url: receiver.url('/other'), secret: OTHER_SECRET, events: ['user_export.completed'] },
      ],
    });
    const ended = async (project: string) => {
      const id = newTaskId('export');
      await service
        .db()
        .query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'export', $2)`, [id, project]);
      await failTask(service.db(), id, TASK_ENDINGS.cancelled());
      return id;
    };
    const others = await ended('other');
    const own = await ended('default');
    const [event] = await received('/other', others);
    expect(
      signatureVerifies(event as ReceivedEvent, OTHER_SECRET),
      "signed with its project's secret",
    ).to.equal(true);
    expect(JSON.parse((event as ReceivedEvent).body).payload.project_id).to.equal('other');
    await received('/main?token=kept-out-of-lists', own);
    expect(
      receiver.eventsOf('/main?token=kept-out-of-lists', others),
      "not to the other project's",
    ).to.deep.equal([]);
    expect(receiver.eventsOf('/other', own), "not to the other project's").to.deep.equal([]);
    const endpointsOf = async (taskId: string) =>
      (
        await service.db().query<{ endpoint_id: string }>(
          `SELECT d.endpoint_id FROM webhook_deliveries d JOIN task_events e ON e.id = d.event_id
              WHERE e.task_id = $1 ORDER BY 1`,
          [taskId],
        )
      ).rows.map((r) => r.endpoint_id);
    expect(await endpointsOf(others)).to.deep.equal(['crm']);
    expect(await endpointsOf(own)).to.deep.equal(['main']);
  });

  it('lists the attempts a page at a time, and refuses what it cannot read', async () => {
    const page = await get('/_api/admin/webhooks/deliveries?limit=2');
    const deliveries = page.body.deliveries as { id: string }[];
    expect(deliveries).to.have.length(2);
    const next = await get(page.body.next as string);
    const rest = next.body.deliveries as { id: string }[];
    expect(Number(rest[0]?.id)).to.be.below(Number(deliveries[1]?.id));
    for (const bad of ['limit=0', 'limit=201', 'after=x', 'event_id=nope']) {
      const res = await get(`/_api/admin/webhooks/deliveries?${bad}`);
      expect(res.statusCode, bad).to.equal(400);
      expect((res.body.error as { reason: string }).reason).to.equal('BadRequest');
    }
    const unknown = await service.client().request({
      method: 'POST',
      url: '/_api/admin/webhooks/endpoints/nope/enable',
      token: await adminToken(service.keys()),
    });
    expect(unknown.statusCode).to.equal(404);
    expect(JSON.parse(unknown.body).error.reason).to.equal('WebhookEndpointNotFound');
  });
});
