import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { startUserctl, userctl } from '../../support/userctl.js';

/**
 * An ndjson file of `count` users of about 250 bytes each, each followed by a blank line of `pad`
 * spaces (skipped by the reader); the positions in `bad` are not JSON.
 */
function ndjsonFile(
  dir: string,
  name: string,
  count: number,
  bad: ReadonlySet<number> = new Set(),
  pad = 0,
): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    if (pad > 0 && i > 0) lines.push(' '.repeat(pad));
    lines.push(
      bad.has(i)
        ? '{"email": not json'
        : JSON.stringify({
            email: `${name}-${i}@server-side.test`,
            name: `User ${i} of the server-side import, with a name long enough to fill the line`,
            address: { locality: 'Springfield', country: 'US', street_address: `${i} Evergreen Terrace` },
          }),
    );
  }
  const file = path.join(dir, `${name}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/**
 * `userctl import FILE --server-side`: the file is uploaded through the service's signed URL and
 * imported by one task; the results file has a line per record; an interrupted upload resumes.
 */
describe('userctl import --server-side', function () {
  this.timeout(300_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-server-side-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATA_DIR: api().dataDir });
  const posts = (route: string) =>
    api()
      .logLines()
      .filter((l) => l.msg === 'request' && l.method === 'POST' && l.path === route).length;

  it('imports the file as one task and writes a results line per record, a bad line failing alone', async () => {
    const file = ndjsonFile(dir, 'one', 3_000, new Set([10, 2_500]));
    const run = await userctl(['import', file, '--server-side'], env());
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stderr).to.include('2,998 inserted');
    const results = readFileSync(`${file}.results.ndjson`, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { position: number; outcome: string });
    expect(results.map((r) => r.position)).to.deep.equal(Array.from({ length: 3_000 }, (_, i) => i));
    expect(results.filter((r) => r.outcome === 'failed').map((r) => r.position)).to.deep.equal([10, 2_500]);
    expect(posts('/_api/admin/users/import')).to.equal(1);
    const { rows } = await db().query(
      "SELECT count(*)::int AS n FROM users WHERE standard_attributes->>'email' LIKE 'one-%'",
    );
    expect(rows[0].n).to.equal(2_998);
  });

  it('resumes an interrupted upload on the same upload, staging only the blocks not yet staged', async () => {
    // About 80 MB in blocks of 8 MiB, far more than are staged at once: the kill comes midway.
    const file = ndjsonFile(dir, 'resumed', 10_000, new Set(), 8_000);
    const blocks = Math.ceil(statSync(file).size / (8 * 1024 * 1024));
    expect(blocks).to.be.greaterThan(8);
    const state = `${file}.userctl-state`;
    const journal = () =>
      (existsSync(state) ? readFileSync(state, 'utf8') : '')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const uploadsBefore = posts('/_api/admin/users/import/uploads');
    const first = startUserctl(['import', file, '--server-side'], env());
    await eventually(
      async () => journal().some((e) => typeof e.staged === 'number'),
      (staged) => staged,
      60,
      5,
    );
    first.child.kill('SIGKILL');
    await first.done;
    const stagedAtKill = Math.max(...journal().map((e) => (typeof e.staged === 'number' ? e.staged : 0)));
    expect(stagedAtKill, 'killed before every block was staged').to.be.lessThan(blocks);

    const second = await userctl(['import', file, '--server-side'], env());
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stderr).to.include('10,000 inserted');
    const entries = journal();
    expect(
      entries.filter((e) => 'upload' in e),
      'one upload, taken up again',
    ).to.have.length(1);
    expect(posts('/_api/admin/users/import/uploads') - uploadsBefore).to.equal(1);
    // The second run went on from the blocks the first had staged.
    expect(second.stderr).to.include(
      `from byte ${stagedAtKill * 8 * 1024 * 1024} (block ${stagedAtKill + 1} of ${blocks})`,
    );
    const staged = entries.filter((e) => typeof e.staged === 'number').map((e) => e.staged as number);
    expect(staged.at(-1)).to.equal(blocks);
  });
});
