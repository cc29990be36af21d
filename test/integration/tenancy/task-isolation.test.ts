import { expect } from 'chai';
import { inject } from 'light-my-request';
import { createApp } from '../../../api/app.js';
import { BlobStorage } from '../../../pipeline/blob/blob-storage.js';
import { createLogger } from '../../../pipeline/log.js';
import { fixedProjects } from '../../../pipeline/projects/project-registry.js';
import { newTaskId } from '../../../schemas/task-id.js';
import {
  adminToken,
  makeTestKeys,
  TEST_SECRETS,
  type TestKeys,
  testConfig,
} from '../../support/admin-api.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';

// Two projects served by one facade, each on its Host: a task of one is not the other's to read,
// list or cancel, and the same Idempotency-Key in both makes two tasks.

describe('tasks of two projects on one facade', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  let app: ReturnType<ReturnType<typeof createApp>['callback']>;
  const origin = (id: string) => `https://${id}.tasks.test`;

  before(async () => {
    keys = await makeTestKeys();
    const project = (id: string) =>
      testConfig(keys, { id, domain: `${id}.tasks.test`, public_origin: origin(id) }).project;
    const config = testConfig(
      keys,
      { id: 'alpha', domain: 'alpha.tasks.test', public_origin: origin('alpha') },
      { trust_proxy: true },
    );
    app = createApp({
      config,
      db: db(),
      blobs: await BlobStorage.open({ connectionString: testBlobConnectionString() }, uniqueContainer()),
      secrets: TEST_SECRETS,
      taskCreated: () => {},
      adminJwks: { keys: [] },
      log: createLogger('silent'),
      projects: fixedProjects([project('alpha'), project('beta')]),
    }).callback();
  });

  const call = async (
    project: string,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    { body, key }: { body?: unknown; key?: string } = {},
  ) => {
    const res = await inject(app, {
      method,
      url,
      headers: {
        host: `${project}.tasks.test`,
        authorization: `Bearer ${await adminToken(keys, { audience: origin(project) })}`,
        'x-forwarded-proto': 'https',
        ...(key ? { 'idempotency-key': key } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
  };
  const importBody = { identifier: 'email', records: [{ email: 'same@tasks.test' }] };

  it('makes two tasks of one Idempotency-Key sent to two projects, and one of it sent twice to one', async () => {
    const alpha = await call('alpha', 'POST', '/_api/admin/users/import', { body: importBody, key: 'k-1' });
    const beta = await call('beta', 'POST', '/_api/admin/users/import', { body: importBody, key: 'k-1' });
    const again = await call('beta', 'POST', '/_api/admin/users/import', { body: importBody, key: 'k-1' });
    expect([alpha.status, beta.status, again.status]).to.deep.equal([200, 200, 200]);
    expect(beta.body.id).not.to.equal(alpha.body.id);
    expect(again.body.id).to.equal(beta.body.id);
    const { rows } = await db().query('SELECT project_id FROM tasks ORDER BY project_id');
    expect(rows).to.deep.equal([{ project_id: 'alpha' }, { project_id: 'beta' }]);
  });

  it("reads and lists a project's own tasks only, and cannot cancel another's", async () => {
    const { rows } = await db().query<{ id: string; project_id: string }>('SELECT id, project_id FROM tasks');
    const alphaTask = rows.find((r) => r.project_id === 'alpha')?.id as string;
    expect((await call('alpha', 'GET', `/_api/admin/users/import/${alphaTask}`)).status).to.equal(200);
    expect((await call('beta', 'GET', `/_api/admin/users/import/${alphaTask}`)).status).to.equal(404);
    const listed = await call('beta', 'GET', '/_api/admin/users/import');
    const ids = (listed.body.tasks as { id: string }[]).map((t) => t.id);
    expect(ids).to.have.length(1).and.not.include(alphaTask);

    const exportId = newTaskId('export');
    await db().query(`INSERT INTO tasks (id, kind, project_id) VALUES ($1, 'export', 'alpha')`, [exportId]);
    const cancel = await call('beta', 'DELETE', `/_api/admin/users/export/${exportId}`);
    expect(cancel.status, JSON.stringify(cancel.body)).to.equal(404);
    const { rows: still } = await db().query('SELECT status FROM tasks WHERE id = $1', [exportId]);
    expect(still).to.deep.equal([{ status: 'pending' }]);
  });
});
