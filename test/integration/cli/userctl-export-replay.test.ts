import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';
import { userctl } from '../../support/userctl.js';

describe('userctl export, status and replay', function () {
  this.timeout(180_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-export-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATA_DIR: api().dataDir });
  let importedAt: Date;

  before(async () => {
    importedAt = new Date();
    const file = path.join(dir, 'users.ndjson');
    const lines = Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({ email: `x${i}@export.test`, name: `X ${i}` }),
    );
    writeFileSync(file, lines.join('\n'));
    const run = await userctl(['import', file], env());
    expect(run.code, run.stderr).to.equal(0);
  });

  it('downloads a complete CSV file with the fields asked for', async () => {
    const output = path.join(dir, 'users.csv');
    const run = await userctl(
      ['export', '--format', 'csv', '--field', '/email:Email', '--field', '/name', '-o', output],
      env(),
    );
    expect(run.code, run.stderr).to.equal(0);
    const lines = readFileSync(output, 'utf8').trimEnd().split('\n');
    expect(lines[0]).to.equal('Email,name');
    expect(lines.slice(1).sort()).to.deep.equal(
      Array.from({ length: 300 }, (_, i) => `x${i}@export.test,X ${i}`).sort(),
    );
    expect(run.stderr).to.match(/export: [\d,]+ bytes written to/);
  });

  it('downloads a complete ndjson file, and shows the task with status', async () => {
    const output = path.join(dir, 'users.ndjson.out');
    const run = await userctl(['export', '--format', 'ndjson', '-o', output], env());
    expect(run.code, run.stderr).to.equal(0);
    const users = readFileSync(output, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { email: string });
    expect(users).to.have.length(300);
    expect(run.stderr).to.match(/export: 300 records, sha256 [0-9a-f]{64}, as the service wrote them/);
    const id = /task (userexport_\w+)/.exec(run.stderr)?.[1] ?? '';
    const status = await userctl(['status', id], env());
    expect(status.code, status.stderr).to.equal(0);
    expect(JSON.parse(status.stdout)).to.deep.include({ id, status: 'completed' });
  });

  it('lists the tasks, newest first, both kinds or one, as a table or JSON lines, every page with --all', async () => {
    const all = await userctl(['tasks', '--all', '--json', '--limit', '1'], env());
    expect(all.code, all.stderr).to.equal(0);
    const tasks = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; created_at: string; status: string });
    expect(tasks.some((t) => t.id.startsWith('userimport_'))).to.equal(true);
    expect(tasks.some((t) => t.id.startsWith('userexport_'))).to.equal(true);
    const times = tasks.map((t) => t.created_at);
    expect(times).to.deep.equal([...times].sort().reverse());
    const exports = await userctl(['tasks', '--kind', 'export', '--status', 'completed'], env());
    expect(exports.code, exports.stderr).to.equal(0);
    const lines = exports.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^ID\s+STATE\s+CREATED\s+PROGRESS \/ OUTCOME$/);
    expect(lines.slice(1).length).to.be.above(0);
    for (const line of lines.slice(1))
      expect(line).to.match(/^userexport_\w+\s+completed\s+\S+\s+\d+ records$/);
    const refused = await userctl(['tasks', '--limit', '500'], env());
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/--limit must be a whole number from 1 to 200/);
  });

  it('replays the import log with the service configuration: a dry run lists, a replay creates', async () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${db.schema}`);
    const replayEnv = { ...env(), DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' };
    const from = importedAt.toISOString();
    const dry = await userctl(['replay', '--from', from, '--dry-run'], replayEnv);
    expect(dry.code, dry.stderr).to.equal(0);
    expect(dry.stdout.trim().split('\n')).to.have.length(1);
    expect(dry.stdout).to.match(/userimport_\w+ 300 records upsert=false/);
    expect(dry.stderr).to.include('would create 1 import tasks (300 records)');
    // By project: another project's replay takes none of these imports.
    const other = await userctl(['replay', '--from', from, '--dry-run', '--project', 'other'], replayEnv);
    expect(other.code, other.stderr).to.equal(0);
    expect(other.stderr).to.include('would create 0 import tasks (0 records)');

    const real = await userctl(['replay', '--from', from, '--upsert'], replayEnv);
    expect(real.code, real.stderr).to.equal(0);
    expect(real.stderr).to.include('created 1 import tasks (300 records)');
    const { rows } = await db().query(
      `SELECT options->>'upsert' AS upsert FROM tasks WHERE replay_of IS NOT NULL`,
    );
    expect(rows).to.deep.equal([{ upsert: 'true' }]);

    const bad = await userctl(['replay', '--from', 'yesterday'], replayEnv);
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim()).to.equal(
      'userctl: FROM must be an RFC 3339 time (2026-11-23T10:00:00Z) or an offset, not "yesterday"',
    );
  });

  it('writes a file only its owner reads, never through a planted link, with formulas escaped when asked', async () => {
    const input = path.join(dir, 'formula.ndjson');
    writeFileSync(input, JSON.stringify({ email: 'f@export.test', name: '=1+1' }));
    const imported = await userctl(['import', input], env());
    expect(imported.code, imported.stderr).to.equal(0);
    const victim = path.join(dir, 'victim.txt');
    writeFileSync(victim, 'untouched');
    const output = path.join(dir, 'escaped.csv');
    symlinkSync(victim, `${output}.part`);

    const args = ['export', '--format', 'csv', '--field', '/email', '--field', '/name', '--escape-formulas'];
    const run = await userctl([...args, '-o', output], env());
    expect(run.code, run.stderr).to.equal(0);
    expect(readFileSync(victim, 'utf8'), 'the link was not followed').to.equal('untouched');
    expect(statSync(output).mode & 0o777).to.equal(0o600);
    expect(readFileSync(output, 'utf8').split('\n')).to.include("f@export.test,'=1+1");

    const refused = await userctl(['export', '--format', 'ndjson', '--escape-formulas', '-o', output], env());
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('apply to --format csv only');
  });

  it('fails (exit 1) when the file downloaded is not the one the service names', async () => {
    // The service names another digest than its file's, as a download cut or altered on its way would.
    await db().query(`
      CREATE FUNCTION wrong_digest() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.file_sha256 := repeat('0', 64); RETURN NEW; END $$;
      CREATE TRIGGER wrong_digest BEFORE UPDATE ON tasks FOR EACH ROW
        WHEN (NEW.file_sha256 IS NOT NULL) EXECUTE FUNCTION wrong_digest();`);
    try {
      const output = path.join(dir, 'altered.ndjson');
      const run = await userctl(['export', '--format', 'ndjson', '-o', output], env());
      expect(run.code).to.equal(1);
      expect(run.stderr).to.include('the file differs from what the service wrote (SHA-256)');
    } finally {
      await db().query('DROP TRIGGER wrong_digest ON tasks; DROP FUNCTION wrong_digest()');
    }
  });
});
