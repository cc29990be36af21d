import { expect } from 'chai';
import type { TaskBus } from '../../../pipeline/bus/bus.js';
import { createLogger } from '../../../pipeline/log.js';
import {
  type ReplayRequest,
  type ReplaySummary,
  replayImports,
} from '../../../pipeline/replay/replay-imports.js';
import { useImportService } from '../../support/imports.js';
import { testBus } from '../../support/task-endpoints.js';

const log = createLogger('silent');
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

for (const transport of ['postgres', 'kafka'] as const) {
  describe(`replay of the import log on ${transport}`, function () {
    this.timeout(120_000);
    const service = useImportService(transport);
    let bus: TaskBus | undefined;
    after(async () => bus?.close());

    const replay = (request: ReplayRequest, events: Parameters<typeof replayImports>[2] = {}) => {
      bus ??= testBus(transport, service.config().kafkaTopicPrefix, service.db(), log);
      return replayImports(
        {
          pool: service.db(),
          log: bus.importLog,
          bus: transport,
          groupPrefix: service.config().kafkaTopicPrefix,
          project: service.config().project.id,
        },
        request,
        events,
      );
    };
    const emails = async () =>
      (
        await service
          .db()
          .query<{ email: string }>("SELECT standard_attributes->>'email' AS email FROM users ORDER BY 1")
      ).rows.map((r) => r.email);
    const replayedTasks = async () =>
      (
        await service
          .db()
          .query<{ id: string; replay_of: string }>(
            'SELECT id, replay_of FROM tasks WHERE replay_of IS NOT NULL ORDER BY created_at',
          )
      ).rows;
    const completeAll = async (ids: readonly string[]) => {
      const statuses = [];
      for (const id of ids) statuses.push(await service.waitForCompletion(id));
      return statuses;
    };

    let from: Date;
    let to: Date;
    const originals: string[] = [];
    const users = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `${n}@replay.test`);

    before(async () => {
      from = new Date();
      for (let i = 0; i < users.length; i += 2) {
        const res = await service.post({
          identifier: 'email',
          records: users
            .slice(i, i + 2)
            .map((email) => ({ email, password: { type: 'bcrypt', password_hash: HASH } })),
        });
        expect(res.statusCode, res.body).to.equal(200);
        originals.push((JSON.parse(res.body) as { id: string }).id);
      }
      await completeAll(originals);
      to = new Date();
    });

    it('brings deleted users back: one new task per logged import, with replay_of on it', async () => {
      await service.db().query('DELETE FROM users');
      expect(await emails()).to.deep.equal([]);
      const summary = await replay({ from: { time: from }, to: { time: to } });
      expect(summary).to.deep.include({
        messages: 3,
        tasks: 3,
        records: 6,
        skipped: 0,
        finished: true,
        resumed: false,
      });
      const made = await replayedTasks();
      expect(made.map((t) => t.replay_of)).to.have.members(originals);
      const statuses = await completeAll(made.map((t) => t.id));
      for (const [i, status] of statuses.entries()) {
        expect(status.replay_of).to.equal(made[i]?.replay_of);
        expect(status.summary).to.deep.include({ inserted: 2, failed: 0 });
      }
      expect(await emails()).to.deep.equal(users);
      // The password hash was logged sealed and is applied as it was sent.
      const { rows } = await service
        .db()
        .query('SELECT count(*)::int AS n FROM authenticators WHERE password_hash = $1', [HASH]);
      expect(rows[0]?.n).to.equal(6);
    });

    it('doubles nothing when replayed again: the users exist, the records are skipped', async () => {
      const before = (await replayedTasks()).length;
      const summary = await replay({ from: { time: from }, to: { time: to } });
      expect(summary).to.deep.include({ tasks: 3, finished: true });
      const made = (await replayedTasks()).slice(before);
      const statuses = await completeAll(made.map((t) => t.id));
      for (const status of statuses) expect(status.summary).to.deep.include({ skipped: 2, inserted: 0 });
      expect(await emails()).to.deep.equal(users);
    });

    it('goes on where it stopped when interrupted and started again, creating no task twice', async () => {
      const before = (await replayedTasks()).length;
      const interrupt = new AbortController();
      const request: ReplayRequest = { from: { time: from }, to: { time: to }, upsert: true };
      const first: ReplaySummary = await replay(request, {
        signal: interrupt.signal,
        onImport: (i) => {
          if (i.task_id) interrupt.abort();
        },
      });
      expect(first).to.deep.include({ tasks: 1, finished: false });
      const second = await replay(request);
      expect(second).to.deep.include({ tasks: 3, records: 6, finished: true, resumed: true });
      const made = (await replayedTasks()).slice(before);
      expect(made.map((t) => t.replay_of)).to.have.members(originals);
      const statuses = await completeAll(made.map((t) => t.id));
      for (const status of statuses) expect(status.summary).to.deep.include({ updated: 2 });
      // Started once more, the finished replay is not resumed: a new one begins.
      const dry = await replay({ ...request, dryRun: true });
      expect(dry).to.deep.include({ tasks: 3, dry_run: true, resumed: false });
      expect((await replayedTasks()).length).to.equal(before + 3);
    });

    it('inserts nobody a second time whose identifier changed since: the record is skipped', async () => {
      const moved = 'moved@replay.test';
      await service.db().query(
        `UPDATE identities SET login_id = $2::text, original_login_id = $2, email = $2, claims = jsonb_build_object('email', $2::text)
          WHERE login_id = $1`,
        [users[0], moved],
      );
      await service.db().query(
        `UPDATE users SET standard_attributes = jsonb_set(standard_attributes, '{email}', to_jsonb($2::text))
          WHERE standard_attributes->>'email' = $1`,
        [users[0], moved],
      );
      const before = (await replayedTasks()).length;
      await replay({ from: { time: from }, to: { time: to } });
      const made = (await replayedTasks()).slice(before);
      const statuses = await completeAll(made.map((t) => t.id));
      const first = statuses.find((s) => s.replay_of === originals[0]);
      expect(first?.summary).to.deep.include({ inserted: 0, skipped: 2 });
      const [a] = (first?.details ?? []) as { outcome: string; warnings: { message: string }[] }[];
      expect(a?.warnings).to.deep.equal([
        {
          message:
            'not inserted again: the user this record inserted when first imported exists with another email',
        },
      ]);
      expect(await emails()).to.deep.equal([...users.slice(1), moved].sort());
    });
  });
}
