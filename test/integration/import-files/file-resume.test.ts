import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { useFileImportWorkers } from '../../support/file-imports.js';
import { insertedSummary } from '../../support/imports.js';
import { taskProgress } from '../../support/worker-process.js';

const RECORDS = 20_000;
const BATCH = 100;

/** The log lines of a worker's stdout, parsed, as they come. */
function logLines(worker: { stdout: NodeJS.ReadableStream | null }): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  let rest = '';
  worker.stdout?.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString('utf8');
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts)
      if (part.startsWith('{')) lines.push(JSON.parse(part) as Record<string, unknown>);
  });
  return lines;
}

/**
 * A worker SIGKILLed while it applies a file import, at 30% and at 70%: each next attempt reads the
 * sealed copy from the frame of the last committed batch (a ranged read, nothing before it), and
 * every record is applied once.
 */
describe('file import worker killed mid-file resumes at the committed offset', function () {
  this.timeout(180_000);
  const service = useFileImportWorkers();
  const { db } = service;
  const startWorker = () =>
    service.startWorker({ IMPORT_BATCH_SIZE: String(BATCH), LOG_LEVEL: 'info' }, { output: true });

  /** Uploads RECORDS users as ndjson.gz and starts their import; its task id. */
  function startFileImport(): Promise<string> {
    let text = '';
    for (let i = 0; i < RECORDS; i++)
      text += `${JSON.stringify({ email: `r${i}@resume.example.com`, name: `R ${i}` })}\n`;
    return service.importFile(gzipSync(text), { identifier: 'email', format: 'ndjson' });
  }

  /** Runs a worker until the task has applied `share` of its records, then SIGKILLs it; the progress. */
  async function killAt(id: string, share: number) {
    const worker = startWorker();
    const lines = logLines(worker);
    const seen = await eventually(
      () => taskProgress(db(), id),
      (p) => p.processed >= RECORDS * share || p.status !== 'pending',
      90,
      5,
    );
    worker.kill('SIGKILL');
    await new Promise((resolve) => worker.once('exit', resolve));
    expect(seen.status, `killed before the end (at ${share})`).to.equal('pending');
    return { ...(await taskProgress(db(), id)), lines };
  }

  /** The sealed copy's byte where the frame holding record `from` starts. */
  async function frameStart(from: number): Promise<number> {
    const { rows } = await db().query<{ sealed_start: string }>(
      'SELECT sealed_start FROM import_file_frames WHERE first_record <= $1 ORDER BY frame DESC LIMIT 1',
      [from],
    );
    return Number(rows[0]?.sealed_start);
  }

  it('reads on from the frame of the resume point each time, and applies every record once', async () => {
    const id = await startFileImport();
    const first = await killAt(id, 0.3);
    expect(first.processed).to.be.greaterThan(0);

    const second = await killAt(id, 0.7);
    const resumedAt = second.lines.find((l) => l.msg === 'reading the file');
    expect(resumedAt, 'the second attempt said where it read from').to.not.equal(undefined);
    expect(resumedAt?.from).to.equal(first.processed);
    expect(resumedAt?.sealed_start).to.equal(await frameStart(first.processed));
    expect(resumedAt?.sealed_start, 'not the file from its start').to.be.greaterThan(0);
    expect(second.processed).to.be.greaterThan(first.processed);

    const last = startWorker();
    const lines = logLines(last);
    const end = await eventually(
      () => taskProgress(db(), id),
      (p) => p.status === 'completed',
      90,
    );
    last.kill('SIGTERM');
    expect(end.status).to.equal('completed');
    const third = lines.find((l) => l.msg === 'reading the file');
    expect(third?.from).to.equal(second.processed);
    expect(third?.sealed_start).to.equal(await frameStart(second.processed));
    // A batch is a frame: a resumed attempt reads no record it does not apply.
    expect(lines.find((l) => l.msg === 'file read')?.reread).to.equal(0);

    const { rows } = await db().query(
      `SELECT t.summary,
              (SELECT count(DISTINCT index)::int FROM import_details d WHERE d.task_id = t.id) AS indexes,
              (SELECT count(*)::int FROM users) AS users
         FROM tasks t WHERE t.id = $1`,
      [id],
    );
    expect(rows[0]).to.deep.equal({ summary: insertedSummary(RECORDS), indexes: RECORDS, users: RECORDS });
  });
});
