import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { sweepChangeLog } from '../../../pipeline/db/user-change-log.js';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { startUserctl, userctl } from '../../support/userctl.js';
import { insertGeneratedUsers } from '../../support/users.js';

describe('userctl changes and export --then-follow', function () {
  this.timeout(180_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-changes-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATA_DIR: api().dataDir });
  const lines = (text: string) =>
    text
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) => JSON.parse(l) as { id: string; type: string; user_id: string; record?: { email?: string } },
      );
  const resumeCursor = (stderr: string) => /resume with --after (\S+)/.exec(stderr)?.[1] ?? '';

  it('exports, then follows the changes after its snapshot until interrupted, and resumes from its cursor', async () => {
    await insertGeneratedUsers(db(), 50, { prefix: 'before' });
    const output = path.join(dir, 'users.ndjson');
    const run = startUserctl(['export', '--format', 'ndjson', '-o', output, '--then-follow'], env());
    let stderr = '';
    let stdout = '';
    run.child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    run.child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    await eventually(
      async () => stderr,
      (text) => text.includes('following the changes'),
      60,
    );
    expect(readFileSync(output, 'utf8').trim().split('\n')).to.have.length(50);
    await insertGeneratedUsers(db(), 3, { prefix: 'after' });
    await db().query(`DELETE FROM users WHERE standard_attributes->>'email' = 'before1@example.com'`);
    await eventually(
      async () => stdout,
      (text) => lines(text).length >= 2,
      30,
    );
    run.child.kill('SIGINT');
    const done = await run.done;
    expect(done.code, done.stderr).to.equal(0);
    const followed = lines(done.stdout);
    // One transaction made the three users: three events of it, then the deletion.
    expect(followed.map((e) => e.type)).to.deep.equal([
      'user.created',
      'user.created',
      'user.created',
      'user.deleted',
    ]);
    expect(
      followed
        .slice(0, 3)
        .map((e) => e.record?.email)
        .sort(),
    ).to.deep.equal(['after1@example.com', 'after2@example.com', 'after3@example.com']);
    const cursor = resumeCursor(done.stderr);
    expect(cursor).to.not.equal('');

    const nothing = await userctl(['changes', '--after', cursor], env());
    expect(nothing.code, nothing.stderr).to.equal(0);
    expect(nothing.stdout).to.equal('');
    await db().query(
      `UPDATE users SET is_disabled = true WHERE standard_attributes->>'email' = 'after2@example.com'`,
    );
    const next = await userctl(['changes', '--after', cursor], env());
    expect(next.code, next.stderr).to.equal(0);
    expect(lines(next.stdout).map((e) => [e.type, e.record?.email])).to.deep.equal([
      ['user.updated', 'after2@example.com'],
    ]);
  });

  it('ends with exit 1 and says to export again for a cursor past retention; refuses flags it does not know', async () => {
    const start = await userctl(['changes'], env());
    expect(start.code, start.stderr).to.equal(0);
    const cursor = resumeCursor(start.stderr);
    await insertGeneratedUsers(db(), 1, { prefix: 'expired' });
    await db().query(`UPDATE user_change_log SET occurred_at = now() - interval '1 hour'`);
    expect(await sweepChangeLog(db(), 60)).to.be.greaterThan(0);
    const expired = await userctl(['changes', '--after', cursor], env());
    expect(expired.code).to.equal(1);
    expect(expired.stderr).to.include('export again');
    const unknown = await userctl(['changes', '--since', 'x'], env());
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include('--since');
  });
});
