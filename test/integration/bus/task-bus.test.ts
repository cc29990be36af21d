import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { BusMessage, ConsumerLag, TakenTask, TaskBus } from '../../../pipeline/bus/bus.js';
import { kafkaBus } from '../../../pipeline/bus/kafka.js';
import { FETCH_WAIT_MS } from '../../../pipeline/bus/kafka-task-consumer.js';
import { postgresQueueBus } from '../../../pipeline/bus/postgres-queue.js';
import { exportMessage, importMessage } from '../../../pipeline/bus/task-message.js';
import { insertTask } from '../../../pipeline/db/tasks/admission.js';
import { createLogger } from '../../../pipeline/log.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { groupSettled, TEST_KAFKA_TOPICS, testKafkaBrokers, uniqueTopicPrefix } from '../../support/kafka.js';

/** How long a test watches a consumer not hand a message over: three of its fetch waits. */
const HELD_WINDOW_MS = 3 * FETCH_WAIT_MS;

const log = createLogger('silent');

/** Resolves with the messages a subscriber saw once `count` have arrived. */
function collector(count: number) {
  const seen: BusMessage[] = [];
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    done = resolve;
  });
  return {
    seen,
    all,
    handle: async (m: BusMessage | undefined): Promise<TakenTask | undefined> => {
      if (!m) return undefined; // a freed slot asking for a waiting task: none here
      seen.push(m);
      if (seen.length >= count) done();
      return undefined;
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms)),
  ]);
}

for (const transport of ['postgres', 'kafka'] as const) {
  describe(`task bus on ${transport}`, function () {
    this.timeout(60_000);
    const db = useTestSchema();
    const buses: TaskBus[] = [];
    const makeBus = (prefix: string) => {
      const bus =
        transport === 'kafka'
          ? kafkaBus(testKafkaBrokers(), prefix, log, { topics: TEST_KAFKA_TOPICS })
          : postgresQueueBus(db(), log);
      buses.push(bus);
      return bus;
    };
    afterEach(async () => {
      await Promise.all(buses.splice(0).map((b) => b.close()));
    });

    const newTask = async (): Promise<BusMessage> => {
      const id = newTaskId('import');
      const body = importMessage(id, {
        project_id: 'default',
        request: { identifier: 'email', upsert: false, records: [{ email: `${id}@x.test` }] },
      });
      await insertTask(db(), {
        id,
        project: 'default',
        kind: 'import',
        message: body,
        options: {},
        total: 1,
      });
      return { task_id: id, kind: 'import', body };
    };

    it('delivers each published message of a kind to its subscriber', async () => {
      const prefix = uniqueTopicPrefix();
      const messages = [await newTask(), await newTask(), await newTask()];
      const c = collector(3);
      const bus = makeBus(prefix);
      for (const m of messages) await bus.publish(m);
      await bus.subscribe('import', c.handle);
      await withTimeout(c.all, 30_000);
      expect(c.seen.map((m) => m.task_id).sort()).to.deep.equal(messages.map((m) => m.task_id).sort());
    });

    it('delivers a message again when its handler failed', async () => {
      const prefix = uniqueTopicPrefix();
      const message = await newTask();
      let attempts = 0;
      const c = collector(1);
      const bus = makeBus(prefix);
      await bus.publish(message);
      await bus.subscribe('import', async (m) => {
        if (!m) return undefined;
        attempts++;
        if (attempts === 1) throw new Error('the task could not be claimed');
        return c.handle(m);
      });
      await withTimeout(c.all, 45_000);
      expect(attempts).to.equal(2);
      expect(c.seen).to.deep.equal([message]);
    });

    it('asks a slot whose work ended for the next waiting task, then takes messages again', async () => {
      const bus = makeBus(uniqueTopicPrefix());
      const calls: string[] = [];
      let end: () => void = () => {};
      const finished = new Promise<void>((resolve) => {
        end = resolve;
      });
      const pulled = { finished: Promise.resolve() };
      await bus.subscribe(
        'import',
        async (m) => {
          calls.push(m?.task_id ?? 'no message');
          if (m && calls.length === 1) return { finished };
          // The freed slot's first ask finds a task (ended at once), its second none.
          return calls.filter((c) => c === 'no message').length === 1 && !m ? pulled : undefined;
        },
        1,
      );
      const first = await newTask();
      await bus.publish(first);
      await eventually(
        async () => calls.length,
        (n) => n === 1,
      );
      end();
      await eventually(
        async () => calls.length,
        (n) => n === 3,
      );
      const second = await newTask();
      await bus.publish(second);
      const all = await eventually(
        async () => [...calls],
        (c) => c.length === 4,
      );
      expect(all).to.deep.equal([first.task_id, 'no message', 'no message', second.task_id]);
    });

    it('counts the messages its workers have not handled yet: the consumer lag', async () => {
      const bus = makeBus(uniqueTopicPrefix());
      for (let i = 0; i < 3; i++) await bus.publish(await newTask());
      const waiting = (lags: readonly ConsumerLag[]) =>
        lags.filter((l) => l.kind === 'import').reduce((n, l) => n + l.lag, 0);
      expect(waiting(await bus.lag())).to.equal(3);
      const c = collector(3);
      await bus.subscribe('import', c.handle);
      await withTimeout(c.all, 30_000);
      const drained = await eventually(
        () => bus.lag(),
        (lags) => waiting(lags) === 0,
      );
      expect(waiting(drained)).to.equal(0);
    });

    it('does not deliver messages of another kind', async () => {
      const prefix = uniqueTopicPrefix();
      const bus = makeBus(prefix);
      const exportId = newTaskId('export');
      const exportBody = exportMessage(exportId);
      await insertTask(db(), {
        id: exportId,
        project: 'default',
        kind: 'export',
        message: exportBody,
        options: {},
        total: 0,
      });
      const anImport = await newTask();
      await bus.publish({ task_id: exportId, kind: 'export', body: exportBody });
      await bus.publish(anImport);
      const imports = collector(1);
      const exports = collector(1);
      await bus.subscribe('import', imports.handle);
      await bus.subscribe('export', exports.handle);
      // Once each kind's subscriber has had its own message, each saw only that one.
      await withTimeout(Promise.all([imports.all, exports.all]), 30_000);
      expect(imports.seen).to.deep.equal([anImport]);
      expect(exports.seen).to.deep.equal([{ task_id: exportId, kind: 'export', body: exportBody }]);
    });
  });
}

describe('task bus on kafka, tasks longer than the session', function () {
  this.timeout(90_000);
  const db = useTestSchema();
  const SESSION_MS = 6_000; // the broker's least (group.min.session.timeout.ms)
  const buses: TaskBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });
  const makeBuses = (prefix: string, n: number) => {
    const made = Array.from({ length: n }, () =>
      kafkaBus(testKafkaBrokers(), prefix, log, { topics: TEST_KAFKA_TOPICS, sessionTimeoutMs: SESSION_MS }),
    );
    buses.push(...made);
    return made;
  };
  const newExport = async (): Promise<BusMessage> => {
    const id = newTaskId('export');
    const body = exportMessage(id);
    await insertTask(db(), { id, project: 'default', kind: 'export', message: body, options: {}, total: 0 });
    return { task_id: id, kind: 'export', body };
  };
  /** A task that runs until `end` is called; its message is taken at once. */
  const longTask = () => {
    let end: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      end = resolve;
    });
    return { taken: { finished }, end: () => end() };
  };

  it('stays with the worker that took it: no other worker of the group is handed it, through a rebalance', async () => {
    const prefix = uniqueTopicPrefix();
    const message = await newExport();
    const [first, second, third] = makeBuses(prefix, 3);
    const handled: string[] = [];
    const task = longTask();
    // Two slots each: a message delivered again to the worker running its task would be handed over.
    for (const [n, bus] of [first, second].entries())
      await bus?.subscribe(
        'export',
        async (m) => {
          if (!m) return undefined;
          handled.push(`${n}:${m.task_id}`);
          return task.taken;
        },
        2,
      );
    const group = `${prefix}user-export-workers`;
    await groupSettled(group, 2);
    await first?.publish(message);
    await eventually(
      async () => handled.length,
      (n) => n === 1,
    );
    // A third worker joins while the task runs: the group rebalances around it.
    await third?.subscribe('export', async (m) => {
      if (!m) return undefined;
      handled.push(`2:${m.task_id}`);
      return undefined;
    });
    await groupSettled(group, 3);
    // Its offset was committed when it was taken: the partition's new owner starts after it. A few
    // fetches after the rebalance, a message not committed would have been handed over again.
    await sleep(HELD_WINDOW_MS);
    task.end();
    expect(handled).to.have.length(1);
    expect(handled[0]).to.match(new RegExp(`:${message.task_id}$`));
  });

  it('delivers a message held for a slot again when its task could not be claimed then', async () => {
    const [bus] = makeBuses(uniqueTopicPrefix(), 1);
    const first = longTask();
    const messages = [await newExport(), await newExport()];
    const tries: string[] = [];
    await bus?.subscribe(
      'export',
      async (m) => {
        if (!m) return undefined;
        tries.push(m.task_id);
        if (m.task_id === messages[0]?.task_id) return first.taken;
        // The first try of the held message meets Postgres out of reach.
        if (tries.filter((t) => t === m.task_id).length === 1) throw new Error('the claim failed');
        return undefined;
      },
      1,
    );
    await bus?.publish(messages[0] as BusMessage);
    await eventually(
      async () => tries.length,
      (n) => n === 1,
    );
    await bus?.publish(messages[1] as BusMessage);
    await sleep(HELD_WINDOW_MS); // held: the one slot is busy
    expect(tries, 'held, not handed to the handler yet').to.have.length(1);
    first.end();
    const all = await eventually(
      async () => [...tries],
      (t) => t.length === 3,
    );
    expect(all).to.deep.equal([messages[0]?.task_id, messages[1]?.task_id, messages[1]?.task_id]);
  });

  it('pauses while its slot is full, and takes the next message once the slot frees', async () => {
    const prefix = uniqueTopicPrefix();
    const [bus] = makeBuses(prefix, 1);
    const taken: string[] = [];
    const tasks = [longTask(), longTask()];
    await bus?.subscribe(
      'export',
      async (m) => {
        if (!m) return undefined;
        taken.push(m.task_id);
        return tasks[taken.length - 1]?.taken;
      },
      1,
    );
    const messages = [await newExport(), await newExport()];
    for (const m of messages) await bus?.publish(m);
    await eventually(
      async () => taken.length,
      (n) => n >= 1,
    );
    await sleep(HELD_WINDOW_MS);
    expect(taken, 'no second task while the one slot is taken').to.have.length(1);
    tasks[0]?.end();
    await eventually(
      async () => taken.length,
      (n) => n === 2,
    );
    expect([...taken].sort()).to.deep.equal(messages.map((m) => m.task_id).sort());
    tasks[1]?.end();
  });
});
