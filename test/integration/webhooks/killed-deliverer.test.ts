import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { adminToken } from '../../support/admin-api.js';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';
import { type ReceivedEvent, signatureVerifies, WebhookReceiver } from '../../support/webhook-receiver.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

const SECRET = 'the-secret-of-a-slow-receiver';

/**
 * A receiver that never answers holds a delivery, not a task; and a worker killed while it
 * delivers (its task completed, its event not yet delivered) leaves the delivery to another
 * worker, which delivers it once the first one's lease ran out.
 */
describe('task events when the deliverer is killed', function () {
  this.timeout(120_000);
  const receiver = new WebhookReceiver();
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-workers-'));
  before(() => receiver.start());
  after(async () => {
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const webhooks = [
    { id: 'slow', url: receiver.url('/slow'), secret: SECRET, events: ['user_import.completed'] },
  ];
  // The facade only: the tasks and their events are the worker processes'.
  const service = useImportService(
    'postgres',
    { webhooks },
    { webhook_allowed_hosts: '127.0.0.1' },
    { workers: false },
  );
  const spawnWorker = useWorkerProcesses(service.db.schema);

  const workerEnv = () => {
    const projectFile = path.join(dir, 'project.json');
    writeFileSync(projectFile, JSON.stringify({ webhooks }));
    return {
      PROJECT_CONFIG: projectFile,
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_RETRY_FIRST_MS: '200',
    };
  };

  it('completes tasks while the receiver hangs, and another worker delivers what a killed one held', async () => {
    receiver.answer('/slow', 'hang');
    const first = spawnWorker(workerEnv());
    const done = await service.run({ identifier: 'email', records: [{ email: 'slow-1@example.com' }] });
    const [held] = await eventually(
      async () => receiver.eventsOf('/slow', done.id as string),
      (events) => events.length === 1,
      60,
    );
    // The delivery hangs; another task is taken and completed all the same.
    const next = await service.run({ identifier: 'email', records: [{ email: 'slow-2@example.com' }] });
    expect(next.summary).to.deep.include({ inserted: 1 });

    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    receiver.answer('/slow', 200);
    spawnWorker(workerEnv());

    const again = await eventually(
      async () => receiver.eventsOf('/slow', done.id as string),
      (events) => events.length >= 2,
      60,
    );
    const redelivered = again.at(-1) as ReceivedEvent;
    expect(signatureVerifies(redelivered, SECRET)).to.equal(true);
    expect(JSON.parse(redelivered.body).id).to.equal(JSON.parse((held as ReceivedEvent).body).id);

    const res = await service.client().request({
      method: 'GET',
      url: `/_api/admin/webhooks/deliveries?task_id=${done.id}`,
      token: await adminToken(service.keys()),
    });
    const attempts = (JSON.parse(res.body) as { deliveries: { attempt: number; outcome: string }[] })
      .deliveries;
    const byAttempt = attempts.sort((a, b) => a.attempt - b.attempt).map((d) => [d.attempt, d.outcome]);
    expect(byAttempt[0]).to.deep.equal([1, 'unfinished']);
    expect(byAttempt.at(-1)).to.deep.equal([byAttempt.length, 'delivered']);
    // The other task's event, held by the killed worker or not yet tried, is delivered too.
    await eventually(
      async () => receiver.eventsOf('/slow', next.id as string),
      (events) => events.length >= 1,
      60,
    );
  });
});
