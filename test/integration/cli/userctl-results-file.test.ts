import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Agent, fetch } from 'undici';
import { devAdminToken } from '../../../pipeline/development-keys.js';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { userctl } from '../../support/userctl.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const RECORDS = 100_000;

const parseLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * A 100,000-record import through userctl: every task's results file, read through its signed
 * `results_url`, holds one line per record equal to the task's details and no secret; userctl
 * writes its own results file from those files instead of paging the details.
 */
describe('userctl import with results files', function () {
  this.timeout(600_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-results-'));
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    return tls.close();
  });

  it('reads 100,000 outcomes from the results files, each equal to the details', async () => {
    const file = path.join(dir, 'hundred-thousand.ndjson');
    const lines: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      lines.push(
        JSON.stringify(
          i % 1000 === 999
            ? { email: `broken-${i}`, password: { type: 'bcrypt', password_hash: HASH } }
            : { email: `r-${i}@results.test`, password: { type: 'bcrypt', password_hash: HASH } },
        ),
      );
    }
    writeFileSync(file, `${lines.join('\n')}\n`);

    // A completed task's details are moved aside, where only this test reads them: the status
    // reads then page no details, and userctl's results can come from the results files alone.
    await db().query(`
      CREATE TABLE kept_details (LIKE import_details);
      CREATE FUNCTION keep_details() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        WITH moved AS (DELETE FROM import_details WHERE task_id = NEW.id RETURNING *)
        INSERT INTO kept_details SELECT * FROM moved;
        RETURN NULL;
      END $$;
      CREATE TRIGGER keep_details AFTER UPDATE OF status ON tasks
        FOR EACH ROW WHEN (NEW.status = 'completed') EXECUTE FUNCTION keep_details();`);

    const run = await userctl(['import', file, '--concurrency', '2'], { DATA_DIR: api().dataDir });
    expect(run.code, run.stderr).to.equal(1); // one record in a thousand fails
    const results = parseLines(readFileSync(`${file}.results.ndjson`, 'utf8'));
    expect(results.map((r) => r.position)).to.deep.equal([...Array(RECORDS).keys()]);
    expect(results.filter((r) => r.outcome === 'inserted')).to.have.length(RECORDS - RECORDS / 1000);
    expect(results[999]?.outcome).to.equal('failed');

    const token = await devAdminToken(api().dataDir, 'unused');
    const get = async (route: string) => {
      const res = await fetch(`${api().httpsUrl}${route}`, {
        headers: { authorization: `Bearer ${token}` },
        dispatcher: tls,
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const { rows } = await db().query<{ id: string }>(
      `SELECT id FROM tasks WHERE kind = 'import' ORDER BY created_at`,
    );
    expect(rows.length).to.be.greaterThan(10);
    let lineCount = 0;
    for (const { id } of rows) {
      const status = await get(`/_api/admin/users/import/${id}?details=false`);
      const text = await (await fetch(status.results_url as string)).text();
      expect(text).to.not.include(HASH);
      const fileLines = parseLines(text);
      expect(status.details).to.equal(undefined);
      const paged = await get(`/_api/admin/users/import/${id}`);
      expect(paged.details).to.deep.equal([]);
      // The details as a status read shows them (absent members left out; these records hold no null).
      const kept = await db().query<{ detail: unknown }>(
        `SELECT jsonb_strip_nulls(jsonb_build_object('index', index, 'record', record, 'outcome', outcome,
                'user_id', user_id, 'warnings', warnings, 'errors', errors)) AS detail
           FROM kept_details WHERE task_id = $1 ORDER BY index`,
        [id],
      );
      const details = kept.rows.map((r) => r.detail);
      expect(fileLines).to.deep.equal(details);
      lineCount += fileLines.length;
    }
    expect(lineCount).to.equal(RECORDS);
  });
});
