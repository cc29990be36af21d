import { Writable } from 'node:stream';
import { expect } from 'chai';
import { base64url, SignJWT } from 'jose';
import { createLogger } from '../../../pipeline/log.js';
import {
  adminClient,
  adminToken,
  makeTestKeys,
  TEST_ORIGIN,
  type TestKeys,
  testConfig,
} from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';

const QUERY =
  '{ getUsersByStandardAttribute(attributeName: "email", attributeValue: "a@example.com") { id } }';

describe('admin API authentication (Host and admin JWT)', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  let client: ReturnType<typeof adminClient>;

  before(async () => {
    keys = await makeTestKeys();
    client = adminClient(testConfig(keys), db, keys);
  });

  const post = (token: string | undefined, host?: string) =>
    client.request({
      method: 'POST',
      url: '/_api/admin/graphql',
      token,
      ...(host ? { host } : {}),
      body: { query: QUERY },
    });

  /** A 403 of `reason`; for a refused token, the check that failed (`info.cause`) and RFC 6750's header. */
  function expectForbidden(
    res: { statusCode: number; body: string; headers: Record<string, unknown> },
    reason: 'InvalidAdminJWT' | 'UnknownHost',
    cause?: string,
  ): void {
    expect(res.statusCode).to.equal(403);
    const { error } = JSON.parse(res.body) as { error: Record<string, unknown> };
    expect(error).to.deep.include({ name: 'Forbidden', reason, code: 403 });
    if (reason === 'UnknownHost') {
      expect(error.message).to.equal('the Host header does not name this project');
      return;
    }
    expect(error.info).to.deep.equal({ cause });
    expect(error.message).to.match(/^a valid admin JWT is required: /);
    const challenge = String(res.headers['www-authenticate']);
    if (cause === 'missing') expect(challenge).to.equal('Bearer');
    else expect(challenge).to.match(/^Bearer error="invalid_token", error_description="[^"]+"$/);
  }

  it('accepts a valid token on the project domain (with or without a port)', async () => {
    const token = await adminToken(keys);
    expect((await post(token)).statusCode).to.equal(200);
    const withPort = await post(token, 'admin.test.example:8443');
    expect(withPort.statusCode).to.equal(200);
    expect(JSON.parse(withPort.body)).to.deep.equal({ data: { getUsersByStandardAttribute: [] } });
  });

  it('refuses a missing token', async () => {
    expectForbidden(await post(undefined), 'InvalidAdminJWT', 'missing');
  });

  it('refuses a malformed token and a non-Bearer scheme', async () => {
    expectForbidden(await post('not-a-jwt'), 'InvalidAdminJWT', 'unreadable');
    const basic = await client.request({
      method: 'POST',
      url: '/_api/admin/graphql',
      headers: { authorization: 'Basic YWRtaW46YWRtaW4=' },
      body: { query: QUERY },
    });
    expectForbidden(basic, 'InvalidAdminJWT', 'malformed');
  });

  it('refuses an expired token', async () => {
    expectForbidden(
      await post(await adminToken(keys, { expiresIn: Math.floor(Date.now() / 1000) - 60 })),
      'InvalidAdminJWT',
      'expired',
    );
  });

  it('refuses a token without exp', async () => {
    const token = await new SignJWT({ sub: 'admin' })
      .setProtectedHeader({ alg: 'RS256', kid: 'test' })
      .setAudience(TEST_ORIGIN)
      .sign(keys.privateKey);
    expectForbidden(await post(token), 'InvalidAdminJWT', 'claim');
  });

  it('refuses a token signed by another key', async () => {
    const other = await makeTestKeys();
    expectForbidden(await post(await adminToken(other)), 'InvalidAdminJWT', 'signature');
  });

  it('refuses a token for another audience', async () => {
    expectForbidden(
      await post(await adminToken(keys, { audience: 'https://other.example' })),
      'InvalidAdminJWT',
      'audience',
    );
  });

  it('refuses an unsigned token (alg: none)', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(
      JSON.stringify({ sub: 'admin', aud: TEST_ORIGIN, exp: Math.floor(Date.now() / 1000) + 300 }),
    );
    expectForbidden(await post(`${header}.${payload}.`), 'InvalidAdminJWT', 'algorithm');
  });

  it('refuses an HS256 token keyed with the public key', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(keys.publicJwk));
    const token = await new SignJWT({ sub: 'admin' })
      .setProtectedHeader({ alg: 'HS256', kid: 'test' })
      .setAudience(TEST_ORIGIN)
      .setExpirationTime('5m')
      .sign(secret);
    expectForbidden(await post(token), 'InvalidAdminJWT', 'algorithm');
  });

  it('refuses a wrong Host before looking at the token', async () => {
    expectForbidden(await post(await adminToken(keys), 'evil.example'), 'UnknownHost');
    expectForbidden(await post(undefined, 'evil.example'), 'UnknownHost');
  });

  it('logs which check refused a token, never the token, and never echoes it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = adminClient(
      testConfig(keys),
      db,
      keys,
      undefined,
      undefined,
      undefined,
      createLogger('info', sink),
    );
    const token = await adminToken(keys, { audience: 'https://other.example' });
    const res = await logged.request({
      method: 'POST',
      url: '/_api/admin/graphql',
      token,
      body: { query: QUERY },
    });
    expectForbidden(res, 'InvalidAdminJWT', 'audience');
    expect(res.body).not.to.include(token);
    expect(String(res.headers['www-authenticate'])).not.to.include(token);
    const log = lines.join('');
    expect(log)
      .to.include('admin JWT refused')
      .and.to.include('"claim":"aud"')
      .and.to.include('"cause":"audience"');
    for (const part of token.split('.')) expect(log).not.to.include(part);
  });

  it('refuses a token it accepted once its exp has passed', async () => {
    const token = await adminToken(keys, { expiresIn: Math.floor(Date.now() / 1000) + 2 });
    expect((await post(token)).statusCode, 'accepted while valid').to.equal(200);
    const later = await eventually(
      () => post(token),
      (res) => res.statusCode !== 200,
      6,
    );
    expectForbidden(later, 'InvalidAdminJWT', 'expired');
  });
});
