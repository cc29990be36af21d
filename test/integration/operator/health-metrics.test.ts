import { expect } from 'chai';
import { Agent, fetch as undiciFetch } from 'undici';
import { devAdminToken } from '../../../pipeline/development-keys.js';
import { useApiProcess } from '../../support/api-process.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

/** A counter's value in a Prometheus text exposition (0 when absent). */
function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('health, readiness, metrics and request ids', function () {
  this.timeout(180_000);
  restoreServiceAfter('postgres');
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema);
  const spawnWorker = useWorkerProcesses(db.schema);
  const workerPort = 20_000 + Math.floor(Math.random() * 5_000) + 7;
  const get = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, text: await res.text() };
  };

  it('answers /healthz, and /readyz 503 naming Postgres while it is stopped, 200 once it is back', async () => {
    const workerProcess = spawnWorker({ PIPELINE_HTTP_PORT: String(workerPort) });
    const worker = `http://127.0.0.1:${workerPort}`;
    await eventually(
      () => get(`${worker}/readyz`).catch(() => ({ status: 0, text: '' })),
      (r) => r.status === 200,
      60,
    );
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect((await get(`${api().url}${path}`)).status, `${path} on the public port`).to.equal(404);
    }
    // The API is ready when it can serve lookups (Postgres); a worker when it can work (the bus)
    // and its workers have joined the bus and claim tasks.
    const parts = new Map([
      [api().operatorUrl, ['postgres']],
      [worker, ['postgres', 'bus', 'workers']],
    ]);
    // Without Postgres, the parts that stand on it (the embedded bus too); the workers still claim.
    const downWithPostgres = new Map([
      [api().operatorUrl, ['postgres']],
      [worker, ['postgres', 'bus']],
    ]);
    for (const [base, expected] of parts) {
      expect(await get(`${base}/healthz`)).to.deep.equal({ status: 200, text: '{"status":"ok"}' });
      const ready = await get(`${base}/readyz`);
      expect(ready.status, ready.text).to.equal(200);
      expect(JSON.parse(ready.text).parts.map((p: { part: string }) => p.part)).to.deep.equal(expected);
    }

    await stopService('postgres');
    for (const [base, expected] of downWithPostgres) {
      // A probe may be answered from the round of checks made just before Postgres stopped.
      const down = await eventually(
        () => get(`${base}/readyz`),
        (r) => r.status === 503,
      );
      expect(down.status).to.equal(503);
      expect(JSON.parse(down.text)).to.deep.include({ status: 'unavailable', unavailable: expected });
      // Part names only: no internal error text.
      for (const part of JSON.parse(down.text).parts) expect(Object.keys(part)).to.deep.equal(['part', 'ok']);
      expect((await get(`${base}/healthz`)).status).to.equal(200); // alive all the same
    }
    await startService('postgres');
    for (const base of [api().operatorUrl, worker]) {
      const back = await eventually(
        () => get(`${base}/readyz`),
        (r) => r.status === 200,
        60,
      );
      expect(back.status, back.text).to.equal(200);
    }
    // The next test reads the API process's own metrics and log: this worker must not take its task.
    workerProcess.kill('SIGTERM');
    await new Promise((resolve) => workerProcess.once('exit', resolve));
  });

  it('moves the records and tasks metrics after an import, whose log lines name the request and the admin', async () => {
    const before = await get(`${api().operatorUrl}/metrics`);
    expect(before.status).to.equal(200);
    const inserted = 'users_import_records_total{outcome="inserted"}';
    const token = await devAdminToken(api().dataDir, 'unused');
    const tls = new Agent({ connect: { rejectUnauthorized: false } });
    const res = await undiciFetch(`${api().httpsUrl}/_api/admin/users/import`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-request-id': 'req-metrics-1',
      },
      body: JSON.stringify({
        identifier: 'email',
        records: [{ email: 'm1@metrics.test' }, { email: 'm2@metrics.test' }],
      }),
      dispatcher: tls,
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.equal('req-metrics-1');
    const { id } = (await res.json()) as { id: string };
    await tls.close();

    // The records are counted as they are applied; the task gauges are read by a watch of their own.
    const after = await eventually(
      () => get(`${api().operatorUrl}/metrics`),
      (m) =>
        metric(m.text, inserted) >= metric(before.text, inserted) + 2 &&
        m.text.includes('users_tasks{kind="import",state="completed"}'),
      30,
    );
    expect(metric(after.text, inserted) - metric(before.text, inserted)).to.equal(2);
    expect(after.text).to.include('users_tasks{kind="import",state="completed"}');
    expect(after.text).to.include('users_http_request_duration_seconds_bucket');
    expect(after.text).to.include('# TYPE users_task_consumer_lag gauge');

    // The records are counted as they are applied, the task's end is logged after: it is waited for.
    const lines = await eventually(
      async () => api().logLines(),
      (logged) => logged.some((l) => l.task_id === id && l.msg === 'import completed'),
      30,
    );
    const request = lines.find((l) => l.msg === 'request' && l.request_id === 'req-metrics-1');
    expect(request).to.deep.include({ admin: 'admin', method: 'POST', status: 200 });
    const done = lines.find((l) => l.task_id === id && l.msg === 'import completed');
    expect(done).to.deep.include({ request_id: 'req-metrics-1', admin: 'admin' });
  });
});
