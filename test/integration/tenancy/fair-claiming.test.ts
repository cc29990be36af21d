import { once } from 'node:events';
import { expect } from 'chai';
import { projectFromDocument, withProject } from '../../../pipeline/config.js';
import { putProjects } from '../../../pipeline/projects/project-admin.js';
import { importService } from '../../../pipeline/services/import-service.js';
import { adminToken, TEST_SECRETS } from '../../support/admin-api.js';
import { eventually } from '../../support/eventually.js';
import { HTTPS, useImportService } from '../../support/imports.js';
import { busEnv, useWorkerProcesses } from '../../support/worker-process.js';

const BACKLOG_IMPORTS = 40;
const RECORDS_PER_IMPORT = 2_000;
const BOUNDED_IMPORTS = 6;

/**
 * Project A's backlog of imports queued before project B's one small import, then one worker process
 * with one slot: B's is taken as soon as the slot frees, long before A's backlog drains, on either
 * bus (on Kafka, B's message waits behind A's in its partition).
 */
for (const transport of ['postgres', 'kafka'] as const)
  describe(`fair claiming on the ${transport} bus: one project's backlog never holds another's tasks back`, function () {
    this.timeout(180_000);
    const service = useImportService(transport, {}, {}, { workers: false });
    const startWorker = useWorkerProcesses(service.db.schema);

    it("takes project B's import before project A's backlog drains", async () => {
      const config = service.config();
      const box = TEST_SECRETS;
      const read = (document: unknown, name: string) => projectFromDocument(document, name, config);
      await putProjects({ pool: service.db(), box, read, embedded: true }, [
        { name: 'b.json', document: { id: 'b', domain: 'b.fair.test' } },
      ]);
      const token = await adminToken(service.keys());
      for (let n = 0; n < BACKLOG_IMPORTS; n++) {
        const res = await service.client().request({
          method: 'POST',
          url: '/_api/admin/users/import',
          token,
          headers: HTTPS,
          body: {
            identifier: 'email',
            records: Array.from({ length: RECORDS_PER_IMPORT }, (_, i) => ({
              email: `a${n}-${i}@fair.test`,
            })),
          },
        });
        expect(res.statusCode, res.body).to.equal(200);
      }

      const b = importService({
        config: withProject(config, read({ id: 'b', domain: 'b.fair.test' }, 'b.json')),
        pool: service.db(),
        secrets: box,
        blobs: undefined,
        taskCreated: () => {},
      });
      const task = await b.start(
        { identifier: 'email', upsert: false, records: [{ email: 'b@fair.test' }] },
        { requestedBy: {} },
      );
      const worker = startWorker({ ...busEnv(config), WORKER_CONCURRENCY: '1' });
      const pendingOf = async (project: string) =>
        (
          await service
            .db()
            .query<{ n: number }>(
              `SELECT count(*)::int AS n FROM tasks WHERE project_id = $1 AND kind = 'import' AND status = 'pending'`,
              [project],
            )
        ).rows[0]?.n ?? 0;
      try {
        const done = await eventually(
          async () => (await b.find(task.id)).status,
          (status) => status === 'completed',
          120,
        );
        expect(done).to.equal('completed');
        const left = await pendingOf('default');
        expect(left, "project A's imports still waiting when B's completed").to.be.above(BACKLOG_IMPORTS / 2);
      } finally {
        // Stopped before the schema goes: the rest of A's backlog is not this test's.
        worker.kill('SIGKILL');
        await once(worker, 'exit');
      }
    });

    it("runs no more of a project's tasks at once than its bound, and every one of them", async () => {
      const config = service.config();
      const read = (document: unknown, name: string) => projectFromDocument(document, name, config);
      const bounded = { id: 'c', domain: 'c.fair.test', limits: { running_tasks: 1 } };
      await putProjects({ pool: service.db(), box: TEST_SECRETS, read, embedded: true }, [
        { name: 'c.json', document: bounded },
      ]);
      const c = importService({
        config: withProject(config, read(bounded, 'c.json')),
        pool: service.db(),
        secrets: TEST_SECRETS,
        blobs: undefined,
        taskCreated: () => {},
      });
      const ids: string[] = [];
      for (let n = 0; n < BOUNDED_IMPORTS; n++) {
        const records = Array.from({ length: 500 }, (_, i) => ({ email: `c${n}-${i}@fair.test` }));
        ids.push((await c.start({ identifier: 'email', upsert: false, records }, { requestedBy: {} })).id);
      }
      // Three slots: while one runs the project's one task, the others take its messages and pass
      // them over; each next task is taken by the slot its predecessor frees.
      const worker = startWorker({ ...busEnv(config), WORKER_CONCURRENCY: '3' });
      try {
        const statuses = await eventually(
          async () => Promise.all(ids.map(async (id) => (await c.find(id)).status)),
          (all) => all.every((status) => status === 'completed'),
          60,
        );
        expect(statuses.every((status) => status === 'completed')).to.equal(true);
        const { rows } = await service.db().query<{ overlapping: number; attempts: number }>(
          `SELECT (SELECT count(*)::int FROM task_attempts a JOIN task_attempts b
                     ON a.task_id < b.task_id AND a.claimed_at < b.ended_at AND b.claimed_at < a.ended_at
                   WHERE a.task_id = ANY($1) AND b.task_id = ANY($1)) AS overlapping,
                  (SELECT count(*)::int FROM task_attempts WHERE task_id = ANY($1)) AS attempts`,
          [ids],
        );
        expect(rows[0], 'one attempt each, none beside another').to.deep.equal({
          overlapping: 0,
          attempts: BOUNDED_IMPORTS,
        });
      } finally {
        worker.kill('SIGKILL');
        await once(worker, 'exit');
      }
    });
  });
