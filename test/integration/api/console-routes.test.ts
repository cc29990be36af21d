import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Koa from 'koa';
import { inject } from 'light-my-request';
import { consoleRoutes } from '../../../api/console/serve-console.js';
import { errorEnvelope } from '../../../api/errors.js';
import { createLogger } from '../../../pipeline/log.js';
import { adminClient, adminToken, makeTestKeys, type TestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

/** What the facade serves for the console besides its files: the project's settings, the development sign-in. */
describe('console routes', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  before(async () => {
    keys = await makeTestKeys();
  });
  const client = () =>
    adminClient(
      testConfig(keys, {
        custom_attributes: [
          { name: 'tier', type: 'string' },
          { name: 'score', type: 'number' },
        ],
      }),
      db,
      keys,
    );

  it("answers the project's declared custom attributes to an admin, and nobody else", async () => {
    const res = await client().request({
      method: 'GET',
      url: '/console/project.json',
      token: await adminToken(keys),
    });
    expect(res.statusCode, res.body).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal({
      custom_attributes: [
        { name: 'tier', type: 'string' },
        { name: 'score', type: 'number' },
      ],
    });
    const anonymous = await client().request({ method: 'GET', url: '/console/project.json' });
    expect(anonymous.statusCode).to.equal(403);
  });

  it('has no development sign-in where the project names its admin keys', async () => {
    const res = await client().request({ method: 'POST', url: '/console/development-token' });
    expect(res.statusCode).to.equal(404);
    expect(JSON.parse(res.body)).to.have.nested.property('error.reason', 'NotFound');
    expect(res.body).not.to.match(/eyJ/);
  });

  it('mints a development token for a caller on this machine only, never one relayed by a proxy', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'console-dev-'));
    try {
      const base = testConfig(keys);
      const config = {
        ...base,
        dataDir,
        developmentKeys: true,
        project: { ...base.project, adminApi: { ...base.project.adminApi, jwks: undefined } },
      };
      const app = new Koa();
      app.use(errorEnvelope(createLogger('silent')));
      app.use(consoleRoutes(config, []).routes());
      const post = (headers: Record<string, string>, remoteAddress: string) =>
        inject(app.callback(), { method: 'POST', url: '/console/development-token', headers, remoteAddress });
      const local = await post({}, '127.0.0.1');
      expect(local.statusCode, local.body).to.equal(200);
      expect((JSON.parse(local.body) as { token: string }).token).to.match(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(local.headers['cache-control']).to.equal('no-store');
      for (const [headers, address] of [
        [{ 'x-forwarded-for': '203.0.113.9' }, '127.0.0.1'],
        [{ forwarded: 'for=203.0.113.9' }, '::1'],
        [{}, '203.0.113.9'],
      ] as const) {
        const refused = await post(headers, address);
        expect(refused.statusCode, `${JSON.stringify(headers)} from ${address}`).to.equal(403);
        expect(refused.body).not.to.match(/eyJ/);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
