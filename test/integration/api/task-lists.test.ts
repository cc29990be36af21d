import { expect } from 'chai';
import { newTaskId } from '../../../schemas/task-id.js';
import { adminToken } from '../../support/admin-api.js';
import { useExportService } from '../../support/exports.js';
import { HTTPS, useImportService } from '../../support/imports.js';

type TaskList = { tasks: Record<string, unknown>[]; next?: string };

/**
 * GET /_api/admin/users/import and /export: a project's tasks, newest first, a page at a time,
 * filtered by state; the same members as each task's status read.
 */
describe('task lists', function () {
  this.timeout(60_000);

  describe('imports', () => {
    const service = useImportService('postgres', {}, {}, { workers: false });

    async function list(query: string, headers: Record<string, string> = HTTPS) {
      const res = await service.client().request({
        method: 'GET',
        url: `/_api/admin/users/import${query}`,
        token: await adminToken(service.keys()),
        headers,
      });
      return { statusCode: res.statusCode, body: JSON.parse(res.body) as TaskList & { error?: unknown } };
    }

    /** Seven tasks a second apart (the newest last): pending, completed, failed in turn. */
    async function seedTasks(): Promise<string[]> {
      const ids: string[] = [];
      for (let n = 0; n < 7; n++) {
        const id = newTaskId('import');
        ids.push(id);
        const state = ['pending', 'completed', 'failed'][n % 3];
        await service.db().query(
          `INSERT INTO tasks (id, kind, project_id, status, created_at, completed_at, failed_at, error, summary,
                              progress_total)
           VALUES ($1, 'import', 'default', $2, now() - make_interval(secs => 100 - $3),
                   CASE WHEN $2 = 'completed' THEN now() END,
                   CASE WHEN $4 THEN now() END,
                   CASE WHEN $4 THEN '{"name":"InternalError","reason":"UnexpectedError","message":"m","code":500}'::jsonb END,
                   CASE WHEN $2 = 'completed' THEN '{"total":1,"inserted":1}'::jsonb END, 1)`,
          [id, state === 'pending' ? 'pending' : 'completed', n, state === 'failed'],
        );
      }
      // Another project's task, and one past retention: in no list of this project.
      await service
        .db()
        .query(`INSERT INTO tasks (id, kind, project_id, created_at) VALUES ($1, 'import', 'other', now())`, [
          newTaskId('import'),
        ]);
      await service.db().query(
        `INSERT INTO tasks (id, kind, project_id, status, created_at, completed_at)
         VALUES ($1, 'import', 'default', 'completed', now() - interval '400 days', now() - interval '399 days')`,
        [newTaskId('import')],
      );
      return ids;
    }

    it('pages through every task of the project, newest first, each once, with the status members', async () => {
      const ids = await seedTasks();
      const seen: Record<string, unknown>[] = [];
      let query = '?limit=3';
      const pages: number[] = [];
      for (;;) {
        const page = await list(query);
        expect(page.statusCode, JSON.stringify(page.body)).to.equal(200);
        pages.push(page.body.tasks.length);
        seen.push(...page.body.tasks);
        if (!page.body.next) break;
        expect(page.body.next).to.match(/^\/_api\/admin\/users\/import\?after=[\w-]+&limit=3$/);
        query = page.body.next.slice(page.body.next.indexOf('?'));
      }
      expect(pages).to.deep.equal([3, 3, 1]);
      expect(seen.map((t) => t.id)).to.deep.equal([...ids].reverse());
      const pending = seen.find((t) => t.id === ids[6]);
      expect(pending).to.deep.include({ status: 'pending', progress: { processed: 0, total: 1 } });
      const failed = seen.find((t) => t.id === ids[5]);
      expect(failed).to.have.property('failed_at');
      expect(failed).to.deep.include({ status: 'completed' });
      expect(failed).to.have.nested.property('error.reason', 'UnexpectedError');
      const done = seen.find((t) => t.id === ids[4]);
      expect(done).to.deep.include({ status: 'completed', summary: { total: 1, inserted: 1 } });
      expect(done).not.to.have.property('details');
    });

    it('filters by state: pending, completed (failed among them), failed', async () => {
      const ids = await seedTasks();
      const idsOf = async (status: string) =>
        (await list(`?status=${status}`)).body.tasks
          .map((t) => t.id)
          .filter((id) => ids.includes(id as string));
      expect(await idsOf('pending')).to.deep.equal([ids[6], ids[3], ids[0]]);
      expect(await idsOf('completed')).to.deep.equal([ids[5], ids[4], ids[2], ids[1]]);
      expect(await idsOf('failed')).to.deep.equal([ids[5], ids[2]]);
      // The filter stays on the next page's path.
      const first = await list('?status=completed&limit=1');
      expect(first.body.next).to.match(/&status=completed$/);
    });

    it('refuses a query it cannot read, and a request that is not HTTPS', async () => {
      for (const query of [
        '?status=running',
        '?limit=0',
        '?limit=201',
        '?limit=x',
        '?after=nope',
        '?limit=1&limit=2',
      ]) {
        const res = await list(query);
        expect(res.statusCode, query).to.equal(400);
        expect(res.body.error, query).to.be.a('string');
      }
      expect((await list('', {})).statusCode).to.equal(400);
    });
  });

  describe('exports', () => {
    const service = useExportService('postgres');

    it('lists exports with what their status read shows: a fresh download_url once done', async () => {
      const done = await service.run({ format: 'csv', csv: { fields: [{ pointer: '/email' }] } });
      const res = await service.client().request({
        method: 'GET',
        url: '/_api/admin/users/export?limit=1',
        token: await adminToken(service.keys()),
      });
      expect(res.statusCode, res.body).to.equal(200);
      const body = JSON.parse(res.body) as TaskList;
      expect(body.tasks).to.have.length(1);
      expect(body.tasks[0]).to.deep.include({ id: done.id, status: 'completed', record_count: 0 });
      expect(body.tasks[0]?.download_url).to.be.a('string');
      expect(body).not.to.have.property('next');
      const bad = await service.client().request({
        method: 'GET',
        url: '/_api/admin/users/export?status=done',
        token: await adminToken(service.keys()),
      });
      expect(bad.statusCode).to.equal(400);
      expect(JSON.parse(bad.body)).to.have.nested.property('error.reason', 'BadRequest');
    });
  });
});
