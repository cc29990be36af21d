import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { adminToken, makeTestKeys, TEST_SECRETS_KEY, type TestKeys } from '../../support/admin-api.js';
import { useApiProcess } from '../../support/api-process.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { userctl } from '../../support/userctl.js';
import { createUser } from '../../support/users.js';

// The deployment's projects are rows: `userctl projects` puts, lists, shows and deletes them, and
// a running API process serves each on its own Host with its own keys, following every change.

const origin = (id: string) => `https://${id}.tenancy.test`;

describe('projects are data: userctl projects, followed by a running service', function () {
  this.timeout(120_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, { LOG_LEVEL: 'warn' });
  const dir = mkdtempSync(path.join(tmpdir(), 'projects-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const keys: Record<string, TestKeys> = {};

  const env = () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${db.schema}`);
    // The deployment's key: the running service opens what userctl seals.
    return {
      DATA_DIR: api().dataDir,
      DATABASE_URL: url.toString(),
      TASK_SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'silent',
    };
  };
  /** A project file of `id` (domain `<id>.tenancy.test`), signed for by `signer`'s keys. */
  const projectFile = (id: string, signer: TestKeys, extra: Record<string, unknown> = {}) => {
    const file = path.join(dir, `${id}-${Object.keys(extra).join('-')}.json`);
    const document = {
      id,
      domain: `${id}.tenancy.test`,
      public_origin: origin(id),
      admin_api: { jwks: { keys: [signer.publicJwk] } },
      ...extra,
    };
    writeFileSync(file, JSON.stringify(document));
    return file;
  };
  /** A lookup on `host` with a token of `signer` for `audience`: its status and the user found. */
  const lookup = async (host: string, signer: TestKeys, audience: string) => {
    // node:http, since fetch does not send a Host of the caller's choosing.
    const body = JSON.stringify({
      query: '{ getUserByLoginID(loginIDKey: "email", loginIDValue: "same@tenancy.test") { id } }',
    });
    const token = await adminToken(signer, { audience });
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${api().url}/_api/admin/graphql`,
        {
          method: 'POST',
          headers: { host, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        },
        (answer) => {
          let text = '';
          answer.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          answer.on('end', () => resolve({ status: answer.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    const parsed = JSON.parse(res.text) as { data?: { getUserByLoginID: { id: string } | null } };
    return { status: res.status, user: parsed.data?.getUserByLoginID?.id ?? null };
  };

  before(async () => {
    for (const id of ['alpha', 'beta', 'rotated']) keys[id] = await makeTestKeys();
  });

  it('puts several projects in one call, lists them, and shows one with its secrets left out', async () => {
    const secret = 'a-webhook-secret-of-alpha';
    const alpha = projectFile('alpha', keys.alpha as TestKeys, {
      webhooks: [
        { id: 'crm', url: 'https://crm.tenancy.test/hook', secret, events: ['user_import.completed'] },
      ],
    });
    const put = await userctl(['projects', 'put', alpha, projectFile('beta', keys.beta as TestKeys)], env());
    expect(put.code, put.stderr).to.equal(0);
    expect(put.stdout).to.equal('created alpha\ncreated beta\n');

    const list = await userctl(['projects', 'list', '--json'], env());
    expect(list.code, list.stderr).to.equal(0);
    const listed = (JSON.parse(list.stdout) as { id: string; domain: string }[]).map((p) => [p.id, p.domain]);
    expect(listed).to.deep.include.members([
      ['alpha', 'alpha.tenancy.test'],
      ['beta', 'beta.tenancy.test'],
      ['default', 'localhost'],
    ]);

    const show = await userctl(['projects', 'show', 'alpha'], env());
    expect(show.code, show.stderr).to.equal(0);
    expect(show.stdout).not.to.include(secret);
    const shown = JSON.parse(show.stdout) as { settings: { webhooks: { secret: string }[] }; usage: unknown };
    expect(shown.settings.webhooks[0]?.secret).to.equal('(set)');
    expect(shown.usage).to.deep.include({ users: 0, pending_tasks: 0 });
    const { rows } = await db().query<{ document: string }>(
      "SELECT document FROM projects WHERE id = 'alpha'",
    );
    expect(rows[0]?.document, 'sealed at rest').to.match(/^v1\./);
  });

  it('changes nothing when one file of a put is bad, or names a domain another project serves', async () => {
    const gamma = projectFile('gamma', keys.alpha as TestKeys);
    const noDomain = path.join(dir, 'no-domain.json');
    writeFileSync(noDomain, JSON.stringify({ id: 'delta', public_origin: origin('delta') }));
    const bad = await userctl(['projects', 'put', gamma, noDomain], env());
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include(`${noDomain}: domain, admin_api.jwks must be given`);

    const taken = projectFile('gamma', keys.alpha as TestKeys, { domain: 'ALPHA.tenancy.test' });
    const refused = await userctl(['projects', 'put', taken], env());
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include("domain ALPHA.tenancy.test is already project alpha's");
    const { rows } = await db().query("SELECT id FROM projects WHERE id IN ('gamma', 'delta')");
    expect(rows).to.deep.equal([]);
  });

  it("serves each project on its Host with its own keys: another project's token or an unknown Host is refused", async () => {
    const alpha = configFromDocument({ project: { id: 'alpha' } }).project;
    const beta = configFromDocument({ project: { id: 'beta' } }).project;
    const alphaUser = await createUser(db(), alpha, { email: 'same@tenancy.test' });
    const betaUser = await createUser(db(), beta, { email: 'same@tenancy.test' });

    const seen = await eventually(
      () => lookup('alpha.tenancy.test', keys.alpha as TestKeys, origin('alpha')),
      (r) => r.status === 200,
      5,
    );
    expect(seen).to.deep.equal({ status: 200, user: alphaUser });
    expect(await lookup('beta.tenancy.test', keys.beta as TestKeys, origin('beta'))).to.deep.equal({
      status: 200,
      user: betaUser,
    });
    expect((await lookup('alpha.tenancy.test', keys.beta as TestKeys, origin('alpha'))).status).to.equal(403);
    expect((await lookup('alpha.tenancy.test', keys.alpha as TestKeys, origin('beta'))).status).to.equal(403);
    expect((await lookup('nobody.tenancy.test', keys.alpha as TestKeys, origin('alpha'))).status).to.equal(
      403,
    );
  });

  it('puts a rotated key in force in the running process within 5 seconds, without a restart', async () => {
    const put = await userctl(['projects', 'put', projectFile('beta', keys.rotated as TestKeys)], env());
    expect(put.code, put.stderr).to.equal(0);
    expect(put.stdout).to.equal('replaced beta\n');
    const started = Date.now();
    const after = await eventually(
      () => lookup('beta.tenancy.test', keys.rotated as TestKeys, origin('beta')),
      (r) => r.status === 200,
      5,
    );
    expect(after.status, 'the new key is taken').to.equal(200);
    expect(Date.now() - started).to.be.below(5_000);
    expect((await lookup('beta.tenancy.test', keys.beta as TestKeys, origin('beta'))).status).to.equal(403);
  });

  it('refuses to delete a project with users; --purge removes them and nothing of another project', async () => {
    const refused = await userctl(['projects', 'delete', 'alpha'], env());
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('project alpha has users or tasks: delete it with --purge');

    const count = async (project: string) =>
      (
        await db().query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE project_id = $1', [
          project,
        ])
      ).rows[0]?.n;
    const purged = await userctl(['projects', 'delete', 'alpha', '--purge'], env());
    expect(purged.code, purged.stderr).to.equal(0);
    expect(purged.stdout).to.equal('deleted alpha; purged 1 users, 0 tasks, 0 files\n');
    expect(await count('alpha')).to.equal(0);
    expect(await count('beta'), "the other project's users stay").to.equal(1);
    const gone = await eventually(
      () => lookup('alpha.tenancy.test', keys.alpha as TestKeys, origin('alpha')),
      (r) => r.status === 403,
      5,
    );
    expect(gone.status, 'its Host is no longer served').to.equal(403);
    expect((await userctl(['projects', 'show', 'alpha'], env())).stderr).to.include('no project alpha');
  });
});
