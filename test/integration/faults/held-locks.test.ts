import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

/**
 * A transaction of a host that vanished keeps its row locks until Postgres notices (keepalive,
 * idle-in-transaction timeout). A worker's statement that meets such a lock gives up after
 * DATABASE_LOCK_TIMEOUT_MS and its task tries again later, instead of queueing behind it with
 * everything it holds itself; once the lock is gone the task completes.
 */
describe('a row lock held by a transaction that never ends', function () {
  this.timeout(60_000);
  const service = useImportService('postgres', {}, {}, { workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  it('makes the waiting statement give up after the lock timeout and the task try again', async () => {
    const worker = spawnWorker({ DATABASE_LOCK_TIMEOUT_MS: '300' }, { output: true });
    let output = '';
    worker.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const first = await service.run({
      identifier: 'email',
      records: [{ email: 'held@lock.test', name: 'before' }],
    });
    expect(first.summary).to.deep.include({ inserted: 1 });

    const holder = await service.db().connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM users FOR UPDATE');
      const id = await service.start({
        identifier: 'email',
        upsert: true,
        records: [{ email: 'held@lock.test', name: 'after' }],
      });
      const retried = await eventually(
        async () => output.split('\n').filter((l) => l.includes('"55P03"')),
        (lines) => lines.length > 0,
      );
      expect(retried, 'a batch gave up on the lock and its task is retried').to.have.length.greaterThan(0);
      expect(retried[0]).to.include('import interrupted; retrying');
      expect((await service.status(id)).body.status).to.equal('pending');
      await holder.query('ROLLBACK');
      const done = await service.waitForCompletion(id);
      expect(done.summary).to.deep.include({ updated: 1, failed: 0 });
    } finally {
      holder.release();
      worker.kill('SIGTERM');
    }
  });
});
