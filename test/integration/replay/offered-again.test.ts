import { expect } from 'chai';
import type { TaskBus } from '../../../pipeline/bus/bus.js';
import { claimTask } from '../../../pipeline/db/tasks/leases.js';
import { createLogger } from '../../../pipeline/log.js';
import { type ReplayedImport, replayImports } from '../../../pipeline/replay/replay-imports.js';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';
import { testBus } from '../../support/task-endpoints.js';

const log = createLogger('silent');

/**
 * A task whose lease lapsed is offered to the workers again: on Kafka as a second message in the
 * import log, marked as offered again, which a replay passes over (one request, one replayed task);
 * on the embedded queue the same message waits again, and the log holds it once.
 */
for (const transport of ['postgres', 'kafka'] as const) {
  describe(`a task offered again, in the import log on ${transport}`, function () {
    this.timeout(60_000);
    const service = useImportService(transport, {}, {}, { workers: false });
    let bus: TaskBus | undefined;
    after(async () => bus?.close());

    it('is not a new request: a replay makes one task of it', async () => {
      const from = new Date();
      const id = await service.start({ identifier: 'email', records: [{ email: 'again@replay.test' }] });
      const published = () =>
        eventually(
          async () =>
            (
              await service
                .db()
                .query('SELECT 1 FROM task_outbox WHERE task_id = $1 AND published_at IS NOT NULL', [id])
            ).rowCount,
          (n) => n === 1,
        );
      expect(await published()).to.equal(1);
      // A worker claims it and dies: its lease lapses, and the upkeep offers it again.
      await claimTask(service.db(), 'import', id, { owner: 'gone:1', leaseMs: 1, runningTasksLimit: 0 });
      await service
        .db()
        .query(`UPDATE tasks SET lease_until = clock_timestamp() - interval '1 s' WHERE id = $1`, [id]);
      const lapsed = await eventually(
        async () =>
          (await service.db().query('SELECT outcome FROM task_attempts WHERE task_id = $1', [id])).rows[0]
            ?.outcome,
        (outcome) => outcome === 'lapsed',
      );
      expect(lapsed, 'the upkeep offered it again').to.equal('lapsed');
      expect(await published(), 'relayed again').to.equal(1);

      bus ??= testBus(transport, service.config().kafkaTopicPrefix, service.db(), log);
      const seen: ReplayedImport[] = [];
      const summary = await replayImports(
        {
          pool: service.db(),
          log: bus.importLog,
          bus: transport,
          groupPrefix: service.config().kafkaTopicPrefix,
          project: service.config().project.id,
        },
        { from: { time: from }, dryRun: true },
        { onImport: (i) => seen.push(i) },
      );
      expect(summary).to.deep.include({ tasks: 1, records: 1 });
      expect(seen.filter((i) => i.skipped === undefined).map((i) => i.replay_of)).to.deep.equal([id]);
      const skipped = seen.filter((i) => i.skipped !== undefined);
      if (transport === 'kafka') {
        expect(skipped.map((i) => [i.replay_of, i.skipped])).to.deep.equal([
          [id, 'a task offered again to the workers, not a new request'],
        ]);
      } else expect(skipped).to.deep.equal([]);
    });
  });
}
