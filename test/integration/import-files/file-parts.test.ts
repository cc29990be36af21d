import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { useFileImportWorkers } from '../../support/file-imports.js';
import { taskProgress } from '../../support/worker-process.js';

const RECORDS = 6_000;
/** Users written three times each, early, midway and late in the file: `version 0`, 1 and 2. */
const REPEATED = 30;

/** The file: one line per record; the repeated users' versions spread across it. */
function fileText(): string {
  const lines: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const third = Math.floor(i / (RECORDS / 3));
    const repeated = i % (RECORDS / 3) < REPEATED ? i % (RECORDS / 3) : undefined;
    lines.push(
      JSON.stringify(
        repeated === undefined
          ? { email: `p${i}@parts.example.com`, name: `P ${i}` }
          : { email: `Same${repeated}@Parts.example.com `, name: `version ${third}` },
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A file larger than IMPORT_FILE_PART_BYTES is routed by identifier into parts that several
 * `make pipeline` workers apply at once: the outcome is a serial order of the file (each user's
 * records in file order, so with upsert the last of a user wins), every record applied once, even
 * when a worker is SIGKILLed midway.
 */
describe('a file import split into parts, applied by several workers', function () {
  this.timeout(180_000);
  const service = useFileImportWorkers();
  const { db } = service;
  const startWorker = (): ChildProcess =>
    service.startWorker({
      IMPORT_BATCH_SIZE: '50',
      IMPORT_FILE_PART_BYTES: '50000',
      IMPORT_FILE_PARTS_MAX: '4',
    });
  const startFileImport = () =>
    service.importFile(Buffer.from(fileText()), { identifier: 'email', upsert: true, format: 'ndjson' });

  it('applies every record once, each user in file order, with a worker SIGKILLed midway', async () => {
    const id = await startFileImport();
    const first = startWorker();
    startWorker();
    const midway = await eventually(
      async () =>
        (await db().query('SELECT coalesce(sum(applied), 0)::int AS n FROM import_file_parts')).rows[0]
          .n as number,
      (n) => n >= RECORDS * 0.3,
      90,
      10,
    );
    expect(midway, 'the parts were being applied').to.be.greaterThan(0);
    first.kill('SIGKILL');
    startWorker();
    const end = await eventually(
      () => taskProgress(db(), id),
      (p) => p.status === 'completed',
      120,
    );
    expect(end.status).to.equal('completed');

    const { rows } = await db().query(
      `SELECT t.summary, t.failed_at,
              (SELECT count(*)::int FROM import_details d WHERE d.task_id = t.id) AS details,
              (SELECT count(DISTINCT index)::int FROM import_details d WHERE d.task_id = t.id) AS indexes,
              (SELECT count(*)::int FROM users) AS users,
              (SELECT count(*)::int FROM import_file_parts p WHERE p.task_id = t.id AND p.done) AS parts
         FROM tasks t WHERE t.id = $1`,
      [id],
    );
    const unique = RECORDS - 2 * REPEATED;
    expect(rows[0]).to.deep.equal({
      summary: {
        total: RECORDS,
        inserted: unique,
        updated: 2 * REPEATED,
        skipped: 0,
        failed: 0,
        warnings: 0,
      },
      failed_at: null,
      details: RECORDS,
      indexes: RECORDS,
      users: unique,
      parts: 4,
    });
    // Each repeated user's last record in the file is the one that stands.
    const { rows: names } = await db().query(
      `SELECT DISTINCT standard_attributes->>'name' AS name FROM users WHERE standard_attributes->>'email' LIKE 'same%'`,
    );
    expect(names).to.deep.equal([{ name: 'version 2' }]);
  });
});
