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

  it('mints a development token for its own console on this machine only: no proxy, no other page, no other Host', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'console-dev-'));
    try {
      const base = testConfig(keys);
      const config = {
        ...base,
        dataDir,
        developmentKeys: true,
        trustProxy: false,
        project: { ...base.project, adminApi: { ...base.project.adminApi, jwks: undefined } },
      };
      const appOf = (c: typeof config) => {
        const app = new Koa({ proxy: c.trustProxy });
        app.use(errorEnvelope(createLogger('silent')));
        app.use(consoleRoutes(c, []).routes());
        return app;
      };
      const app = appOf(config);
      const domain = config.project.domain;
      const own = { host: `${domain}:3000`, origin: `http://${domain}:3000` };
      const post = (headers: Record<string, string>, remoteAddress: string, on = app) =>
        inject(on.callback(), { method: 'POST', url: '/console/development-token', headers, remoteAddress });
      for (const [headers, address] of [
        [own, '127.0.0.1'],
        [{ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }, '127.0.0.1'],
        [{ host: '[::1]:3000', 'sec-fetch-site': 'same-origin' }, '::1'],
      ] as const) {
        const local = await post(headers, address);
        expect(local.statusCode, `${JSON.stringify(headers)}: ${local.body}`).to.equal(200);
        expect((JSON.parse(local.body) as { token: string }).token).to.match(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
        expect(local.headers['cache-control']).to.equal('no-store');
      }
      for (const [headers, address] of [
        [{ ...own, 'x-forwarded-for': '203.0.113.9' }, '127.0.0.1'],
        [{ ...own, forwarded: 'for=203.0.113.9' }, '::1'],
        [{ ...own, 'x-real-ip': '203.0.113.9' }, '127.0.0.1'],
        [{ ...own, via: '1.1 proxy' }, '127.0.0.1'],
        [{ ...own, 'x-forwarded-host': 'evil.test' }, '127.0.0.1'],
        [own, '203.0.113.9'],
        // A page of a rebinding domain: its own Host and Origin, resolved to loopback.
        [{ host: 'rebind.evil.test:3000', origin: 'http://rebind.evil.test:3000' }, '127.0.0.1'],
        // Another page asking the console's origin.
        [{ host: own.host, origin: 'http://evil.test' }, '127.0.0.1'],
        [{ host: own.host, 'sec-fetch-site': 'cross-site' }, '127.0.0.1'],
        [{ host: own.host }, '127.0.0.1'],
      ] as const) {
        const refused = await post(headers, address);
        expect(refused.statusCode, `${JSON.stringify(headers)} from ${address}`).to.equal(403);
        expect(refused.body).not.to.match(/eyJ/);
      }
      const behindProxy = await post(own, '127.0.0.1', appOf({ ...config, trustProxy: true }));
      expect(behindProxy.statusCode, 'off behind a proxy').to.equal(404);
      expect(behindProxy.body).not.to.match(/eyJ/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
