import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REQUEST_LIMIT } from '../../../records/request-chunks.js';
import { useApiProcess } from '../../support/api-process.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { startUserctl, userctl } from '../../support/userctl.js';

interface ResultLine {
  position: number;
  outcome: string;
  user_id?: string;
  warnings?: unknown[];
  errors?: { reason?: string }[];
}

const readResults = (file: string): ResultLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ResultLine);

/** An ndjson file of `count` users of about 250 bytes each; the positions in `bad` hold records that fail. */
function ndjsonFile(dir: string, name: string, count: number, bad: ReadonlySet<number>): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    if (bad.has(i)) {
      lines.push(i % 2 === 0 ? '{"email": not json' : JSON.stringify({ email: `bad-${i}`, name: 'Bad' }));
      continue;
    }
    lines.push(
      JSON.stringify({
        email: `${name}-${i}@cli.test`,
        name: `User ${i} of the command-line import, with a name long enough to fill the line`,
        given_name: 'Given',
        family_name: 'Family',
        address: { locality: 'Springfield', country: 'US', street_address: `${i} Evergreen Terrace` },
      }),
    );
  }
  const file = path.join(dir, `${name}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('userctl import', function () {
  this.timeout(300_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema);
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATA_DIR: api().dataDir });

  /** The import POSTs the service logged: one line per request it received. */
  const importPosts = () =>
    api()
      .logLines()
      .filter((l) => l.msg === 'request' && l.method === 'POST' && l.path === '/_api/admin/users/import');

  it('sends a 3 MB ndjson file in requests of at most 500 KB and writes one result per record, in order', async () => {
    const bad = new Set([7, 4_000, 11_999]);
    const file = ndjsonFile(dir, 'big', 12_000, bad);
    expect(readFileSync(file).length).to.be.greaterThan(3_000_000);
    const postsBefore = importPosts().length;

    const run = await userctl(['import', file, '--concurrency', '3'], env());
    expect(run.code, run.stderr).to.equal(1); // some records failed
    expect(run.stderr).to.include('11,997 inserted').and.to.include('3 failed');

    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => r.position)).to.deep.equal([...Array(12_000).keys()]);
    for (const r of results) {
      if (bad.has(r.position)) {
        expect(r.outcome, `position ${r.position}`).to.equal('failed');
        expect(r.errors).to.have.length.greaterThan(0);
      } else {
        expect(r.outcome, `position ${r.position}`).to.equal('inserted');
        expect(r.user_id).to.match(/^[0-9a-f-]{36}$/);
      }
    }
    expect(results[4_000]?.errors?.[0]?.reason).to.equal('UnreadableRecord'); // not JSON: never sent
    expect(results[7]?.errors?.[0]?.reason).to.equal('ValidationFailed'); // refused by the service

    const posts = importPosts().slice(postsBefore);
    expect(posts.length).to.be.greaterThan(6);
    for (const post of posts) {
      expect(post.status).to.equal(200);
      expect(post.bytes).to.be.at.most(REQUEST_LIMIT);
    }
    const { rows } = await db().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE kind = 'import'`,
    );
    expect(rows[0]?.n).to.equal(posts.length);
    const users = await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM users`);
    expect(users.rows[0]?.n).to.equal(11_997);
  });

  it('reads a CSV file whose header names record members', async () => {
    const file = path.join(dir, 'people.csv');
    writeFileSync(
      file,
      [
        'email,name,address.locality,custom_attributes.tier,email_verified,disabled',
        'csv-1@cli.test,"Ada, Countess",London,,true,',
        'csv-2@cli.test,Grace,Arlington,,false,true',
        'csv-3@cli.test,Edsger,Nuenen,,maybe,',
      ].join('\n'),
    );
    const run = await userctl(['import', file, '--identifier', 'email'], env());
    expect(run.code, run.stderr).to.equal(1);
    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => [r.position, r.outcome])).to.deep.equal([
      [0, 'inserted'],
      [1, 'inserted'],
      [2, 'failed'],
    ]);
    const { rows } = await db().query(
      `SELECT standard_attributes->>'name' AS name, standard_attributes->'address'->>'locality' AS locality, is_disabled
         FROM users WHERE id = $1`,
      [results[0]?.user_id],
    );
    expect(rows).to.deep.equal([{ name: 'Ada, Countess', locality: 'London', is_disabled: false }]);
    const grace = await db().query('SELECT is_disabled FROM users WHERE id = $1', [results[1]?.user_id]);
    expect(grace.rows).to.deep.equal([{ is_disabled: true }]);
  });

  it('reads a JSON array of records', async () => {
    const file = path.join(dir, 'people.json');
    writeFileSync(
      file,
      JSON.stringify([{ email: 'json-1@cli.test' }, 'not an object', { email: 'json-2@cli.test' }]),
    );
    const run = await userctl(['import', file], env());
    expect(run.code, run.stderr).to.equal(1);
    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => [r.position, r.outcome])).to.deep.equal([
      [0, 'inserted'],
      [1, 'failed'],
      [2, 'inserted'],
    ]);
    expect(results[1]?.errors?.[0]?.reason).to.equal('UnreadableRecord');
  });

  it('exits 0 when every record succeeded', async () => {
    const file = ndjsonFile(dir, 'small', 50, new Set());
    const run = await userctl(['import', file], env());
    expect(run.code, run.stderr).to.equal(0);
    expect(readResults(`${file}.results.ndjson`).every((r) => r.outcome === 'inserted')).to.equal(true);
  });

  it('exits 2 with one line on a usage, authentication or connection error', async () => {
    const file = ndjsonFile(dir, 'unsent', 5, new Set());
    const usage = await userctl(['import'], env());
    expect(usage.code).to.equal(2);
    expect(usage.stderr.trim().split('\n')).to.have.length(1);

    const auth = await userctl(['import', file, '--token', 'x.y.z', '--state', `${file}.auth-state`], env());
    expect(auth.code).to.equal(2);
    expect(auth.stderr.trim()).to.match(/^userctl: authentication failed \(403\)/);

    const unreachable = await userctl(
      ['import', file, '--url', 'https://127.0.0.1:1', '--state', `${file}.conn-state`],
      env(),
    );
    expect(unreachable.code).to.equal(2);
    expect(unreachable.stderr.trim()).to.match(
      /^userctl: cannot reach https:\/\/127\.0\.0\.1:1: ECONNREFUSED$/,
    );
  });

  it('refuses an option of another command, or one no command knows, before any request', async () => {
    const file = ndjsonFile(dir, 'strict', 5, new Set());
    const postsBefore = importPosts().length;
    for (const args of [
      ['import', file, '--include-password-hashes'],
      ['import', file, '--kind', 'import'],
      ['import', file, '--frobnicate'],
      ['export', '--format', 'csv', '-o', path.join(dir, 'x.csv'), '--upsert'],
      ['tasks', '--dry-run'],
      ['status', 'userimport_x', '--json'],
    ]) {
      const run = await userctl(args, env());
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(2);
      const option = args.find((a) => a.startsWith('--') && !['--format'].includes(a)) ?? '';
      expect(run.stderr.trim(), args.join(' '))
        .to.match(/^userctl: \w+: Unknown option/)
        .and.to.include(option);
    }
    expect(importPosts().length, 'no request was sent').to.equal(postsBefore);
    const unknown = await userctl(['frobnicate'], env());
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include('unknown command "frobnicate"');
  });

  it('--dry-run is a dry run through the API: would_* outcomes and counts, the failing records, nothing written', async () => {
    const file = ndjsonFile(dir, 'dry', 40, new Set([3]));
    const before = (await db().query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]?.n;
    const run = await userctl(['import', file, '--dry-run'], env());
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stderr)
      .to.include('dry run, nothing written')
      .and.to.include('39 would be inserted')
      .and.to.include('1 failed');
    const results = readResults(`${file}.dry-run.results.ndjson`);
    expect(results.map((r) => r.outcome)).to.deep.equal(
      results.map((r) => (r.position === 3 ? 'failed' : 'would_insert')),
    );
    expect(existsSync(`${file}.results.ndjson`), 'the run itself keeps its own files').to.equal(false);
    const after = (await db().query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]?.n;
    expect(after, 'no user written').to.equal(before);
    // The run itself afterwards is not mistaken for the dry run's journal: it imports.
    const real = await userctl(['import', file], env());
    expect(real.code, real.stderr).to.equal(1);
    expect(real.stderr).to.include('39 inserted');
  });

  it('applies the records of one user in file order across requests in flight, every run: with --upsert the last wins', async () => {
    // Each user appears once in each of several requests (~500 KB each), sent four at a time.
    const users = 40;
    const rounds = 6;
    const lines: string[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let u = 0; u < users; u++)
        lines.push(JSON.stringify({ email: `Dup-${u}@Order.test`, nickname: `round-${round}` }));
      // Filler that pushes the next round into later requests.
      for (let f = 0; f < 1_800; f++)
        lines.push(JSON.stringify({ email: `filler-${round}-${f}@order.test`, name: 'x'.repeat(200) }));
    }
    const file = path.join(dir, 'order.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    for (let run = 0; run < 2; run++) {
      const result = await userctl(
        [
          'import',
          file,
          '--upsert',
          '--concurrency',
          '4',
          '--state',
          `${file}.${run}.state`,
          '--results',
          `${file}.${run}.results`,
        ],
        env(),
      );
      // Every record applied (exit 3 when some carry warnings, 1 when one failed).
      expect(result.code, result.stderr).to.be.oneOf([0, 3]);
      expect(result.stderr).to.include(' 0 failed');
      const { rows } = await db().query<{ nickname: string; n: number }>(
        `SELECT standard_attributes->>'nickname' AS nickname, count(*)::int AS n FROM users
          WHERE standard_attributes->>'email' LIKE 'dup-%@order.test' GROUP BY 1`,
      );
      expect(rows, `run ${run}`).to.deep.equal([{ nickname: `round-${rounds - 1}`, n: users }]);
      // Between runs the users go back to a first round, so that the second run proves the order again.
      await db().query(
        `UPDATE users SET standard_attributes = standard_attributes || '{"nickname":"reset"}'
          WHERE standard_attributes->>'email' LIKE 'dup-%@order.test'`,
      );
    }
  });

  it('killed in the middle and started again, sends none of its requests twice', async () => {
    const file = ndjsonFile(dir, 'resumed', 12_000, new Set());
    const stateFile = `${file}.userctl-state`;
    const postsBefore = importPosts().length;
    const first = startUserctl(['import', file, '--concurrency', '1'], env());
    // Killed just after the service accepted its third request: while it follows that task.
    await eventually(
      async () => (existsSync(stateFile) ? readFileSync(stateFile, 'utf8').split('"task_id"').length - 1 : 0),
      (accepted) => accepted >= 3,
      120,
    );
    first.child.kill('SIGKILL');
    await first.done;
    // Read otherwise, the file would be cut into other requests: the journal refuses the resume.
    const otherwise = await userctl(['import', file, '--format', 'json'], env());
    expect(otherwise.code).to.equal(2);
    expect(otherwise.stderr).to.include('is the state of another import (chunking differ)');

    const second = await userctl(['import', file, '--concurrency', '2'], env());
    expect(second.code, second.stderr).to.equal(0);
    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => r.position)).to.deep.equal([...Array(12_000).keys()]);
    expect(new Set(results.map((r) => r.user_id)).size).to.equal(12_000);

    const posts = importPosts().slice(postsBefore);
    const tasks = await db().query<{ n: number }>(
      `SELECT count(DISTINCT t.id)::int AS n FROM tasks t JOIN import_details d ON d.task_id = t.id
        WHERE d.record->>'email' LIKE 'resumed-%'`,
    );
    expect(posts.length).to.equal(tasks.rows[0]?.n);
    const users = await db().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users WHERE standard_attributes->>'email' LIKE 'resumed-%'`,
    );
    expect(users.rows[0]?.n).to.equal(12_000);
  });
});
