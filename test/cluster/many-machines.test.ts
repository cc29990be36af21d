import { hostname } from 'node:os';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { fetch } from 'undici';
import { adminToken, makeTestKeys, TEST_DOMAIN, type TestKeys } from '../support/admin-api.js';
import { testBlobConnectionString, uniqueContainer } from '../support/blob-containers.js';
import { useTestSchema } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { download } from '../support/exports.js';
import { uniqueTopicPrefix } from '../support/kafka.js';
import { insertGeneratedUsers } from '../support/users.js';
import { clusterBrokers, clusterNode, type ServiceProcess, useDeployment } from './cluster-processes.js';

/**
 * The deployment of many machines, simulated on this one: a three-broker Kafka cluster in KRaft
 * mode (replication 3, min.insync.replicas 2), two API processes and three workers, each a process
 * of its own. While imports (a share of them upserts of the same users, two at a time) and two
 * split exports run, a worker writing an export part is SIGKILLed, a broker is SIGKILLed and
 * started again, two workers join and one leaves with SIGTERM, and an API process restarts. Every
 * accepted task must complete exactly once, with no two attempts of one task ever running at the
 * same time, users exact, and the export files whole. How soon the work a fault touched went on
 * (a part claimed again, an import accepted after a broker died published, the group stable with
 * the joining workers, drained tasks claimed by others) is printed. `make test` runs it small; `make test-cluster` at full size.
 */
const SIZES = {
  short: { imports: 40, records: 100, upsertPairs: 6, users: 60_000, partUsers: 20_000 },
  full: { imports: 120, records: 400, upsertPairs: 20, users: 300_000, partUsers: 75_000 },
} as const;
const SIZE = SIZES[process.env.CLUSTER_SCALE === 'full' ? 'full' : 'short'];
/** An import long enough to be running when its worker is told to stop. */
const LONG_IMPORT_RECORDS = 5_000;

interface Attempt {
  task_id: string;
  attempt: number;
  owner: string;
  claimed_at: Date;
  ended_at: Date | null;
  outcome: string | null;
}

describe(`many machines: a three-broker cluster, two APIs, workers that come and go (${process.env.CLUSTER_SCALE ?? 'short'})`, function () {
  this.timeout(30 * 60_000);
  const db = useTestSchema(12);
  let keys: TestKeys | undefined;
  const prefix = uniqueTopicPrefix();
  const container = uniqueContainer();
  const deployment = useDeployment(
    db.schema,
    () => {
      if (!keys) throw new Error('no keys yet');
      return keys;
    },
    () => ({
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
      AZURE_STORAGE_CONTAINER: container,
      EXPORT_MAX_CONCURRENT: '2',
      EXPORT_PART_USERS: String(SIZE.partUsers),
      IMPORT_BATCH_SIZE: '50',
      TASK_LEASE_SECONDS: '4',
    }),
  );
  before(async () => {
    keys = await makeTestKeys();
  });

  /** Calls an API process as an admin (through a TLS-terminating proxy). */
  async function call(api: ServiceProcess, method: 'GET' | 'POST', path: string, body?: unknown) {
    if (!keys) throw new Error('no keys yet');
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await adminToken(keys)}`,
        'content-type': 'application/json',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': TEST_DOMAIN,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /**
   * How long after `since` the work a fault touched went on (ms): `moved` is read every 100 ms for
   * a minute at most (undefined: it did not).
   */
  async function wentOnAfter(since: number, moved: () => Promise<boolean>): Promise<number | undefined> {
    const remaining = Math.max(0, 60_000 - (Date.now() - since)) / 1000;
    return eventually(
      async () => ((await moved()) ? Date.now() - since : undefined),
      (ms) => ms !== undefined,
      remaining,
      100,
    );
  }

  /** Whether a task attempt was claimed after `since` (among `tasks`, when given). */
  const claimedSince = (since: number, tasks?: readonly string[]) => async () => {
    const { rows } = await db().query(
      `SELECT 1 FROM task_attempts WHERE claimed_at > $1 AND ($2::text[] IS NULL OR task_id = ANY($2)) LIMIT 1`,
      [new Date(since), tasks ?? null],
    );
    return rows.length > 0;
  };

  const report: string[] = [];
  function record(name: string, ms: number | undefined, what: string): void {
    report.push(`${name}: ${ms === undefined ? `${what}: not within 60 s` : `${what} ${ms} ms after it`}`);
  }

  it('completes every task once, never two attempts at once, users exact, files whole', async () => {
    await insertGeneratedUsers(db(), SIZE.users, { prefix: 'base', domain: 'cluster.test', nameLength: 60 });
    const apis = [await deployment.api('api-1'), await deployment.api('api-2')];
    const workers = [
      deployment.worker('worker-1'),
      deployment.worker('worker-2'),
      deployment.worker('worker-3'),
    ];

    // Two exports, each split into parts across the workers.
    const exports: string[] = [];
    for (const [n, format] of (['ndjson', 'csv'] as const).entries()) {
      const res = await call(apis[n % 2] as ServiceProcess, 'POST', '/_api/admin/users/export', { format });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      exports.push(res.body.id as string);
    }
    // Imports through both APIs: fresh users, then pairs of upserts of one set of users, each pair
    // naming its users after itself in two members that must end equal.
    const imports: string[] = [];
    const submit = async (n: number, body: unknown) => {
      const res = await call(apis[n % 2] as ServiceProcess, 'POST', '/_api/admin/users/import', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      imports.push(res.body.id as string);
    };
    for (let t = 0; t < SIZE.imports; t++) {
      const records = Array.from({ length: SIZE.records }, (_, i) => ({ email: `i${t}-${i}@cluster.test` }));
      await submit(t, { identifier: 'email', records });
      if (t < SIZE.upsertPairs) {
        for (const side of ['a', 'b']) {
          const tag = `${side}${t}`;
          const upserts = records.map((r) => ({ email: r.email, name: tag, nickname: tag }));
          await submit(t, { identifier: 'email', upsert: true, records: upserts });
        }
      }
    }

    {
      const pids = new Map(workers.map((w) => [w.child.pid, w]));
      const held = await eventually(
        async () => {
          const { rows } = await db().query<{
            claimed_by: string;
            blob_name: string;
            part: number;
            attempt: number;
          }>(
            `SELECT claimed_by, blob_name, part, attempt FROM export_parts
              WHERE lease_until > clock_timestamp() AND block_ids IS NULL`,
          );
          return rows.find((r) => pids.has(Number(r.claimed_by.split(':').at(-1))));
        },
        (row) => row !== undefined,
        120,
      );
      const holder = pids.get(Number(held?.claimed_by.split(':').at(-1))) as ServiceProcess;
      const at = Date.now();
      holder.child.kill('SIGKILL');
      await holder.exited();
      workers.splice(workers.indexOf(holder), 1);
      // Its part is claimed again by another worker; or, when it was the coordinator too, the
      // export's next attempt is claimed (the snapshot died with it).
      const ms = await wentOnAfter(at, async () => {
        const { rows } = await db().query(
          `SELECT 1 FROM export_parts WHERE blob_name = $1 AND part = $2 AND (attempt > $3 OR block_ids IS NOT NULL)
           UNION ALL SELECT 1 FROM task_attempts a JOIN export_parts p ON p.task_id = a.task_id
            WHERE p.blob_name = $1 AND a.claimed_at > $4`,
          [held?.blob_name, held?.part, held?.attempt, new Date(at)],
        );
        return rows.length > 0;
      });
      record('SIGKILL of a worker writing an export part', ms, 'its part (or its export) claimed again');
    }
    // A small import accepted right after a fault: how soon the deployment takes new work.
    let probed = 0;
    const probe = async (size = 10): Promise<string> => {
      const n = probed;
      probed += size;
      const records = Array.from({ length: size }, (_, i) => ({ email: `p${n + i}@cluster.test` }));
      await submit(n, { identifier: 'email', records });
      return imports.at(-1) as string;
    };
    {
      const at = Date.now();
      clusterNode('kill-node', 2);
      const accepted = await probe();
      // On the bus: the relay's write to the cluster was acknowledged (by the in-sync replicas).
      // The broker stays down until then: the deployment must go on without it.
      const published = await wentOnAfter(at, async () => {
        const { rows } = await db().query(
          `SELECT 1 FROM task_outbox WHERE task_id = $1 AND published_at IS NOT NULL
           UNION ALL SELECT 1 FROM tasks WHERE id = $1 AND status = 'completed'`,
          [accepted],
        );
        return rows.length > 0;
      });
      clusterNode('start-node', 2);
      record(
        'SIGKILL of a broker, started again once the import was published',
        published,
        'an import accepted after it published',
      );
    }
    {
      const at = Date.now();
      const joining = [deployment.worker('worker-4'), deployment.worker('worker-5')];
      workers.push(...joining);
      await Promise.all(joining.map((w) => w.ready()));
      const started = Date.now() - at;
      // The import workers' group has rebalanced around them: stable, every worker a member.
      const admin = new Kafka({ brokers: clusterBrokers(), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const joined = Date.now();
      const ms = await wentOnAfter(joined, async () => {
        const [group] = (await admin.describeGroups([`${prefix}user-import-workers`])).groups;
        return group?.state === 'Stable' && group.members.length === workers.length;
      }).finally(() => admin.disconnect());
      // And they take work: of a dozen small imports, some land on the partitions they were given.
      const probes: string[] = [];
      for (let n = 0; n < 12; n++) probes.push(await probe());
      const claimedByJoining = await eventually(
        async () =>
          (
            await db().query('SELECT 1 FROM task_attempts WHERE owner = ANY($1)', [
              joining.map((w) => `${hostname()}:${w.child.pid}`),
            ])
          ).rowCount,
        (n) => (n ?? 0) > 0,
        60,
      );
      expect(claimedByJoining, 'the joining workers claimed tasks').to.be.above(0);
      record(
        `two workers join (a rebalance; they took ${started} ms to start)`,
        ms,
        'the group stable with them, once started,',
      );
    }
    {
      // The worker running a long import leaves while it runs.
      const long = await probe(LONG_IMPORT_RECORDS);
      const running = await eventually(
        async () =>
          (
            await db().query<{ owner: string | null; progress_processed: number }>(
              'SELECT owner, progress_processed FROM tasks WHERE id = $1',
              [long],
            )
          ).rows[0],
        (row) => row?.owner !== null && (row?.progress_processed ?? 0) > 0,
        60,
      );
      const leaving = workers.find((w) => running?.owner?.endsWith(`:${w.child.pid}`)) as ServiceProcess;
      expect(leaving, 'one of the workers runs the long import').not.to.equal(undefined);
      workers.splice(workers.indexOf(leaving), 1);
      const { rows } = await db().query<{ id: string }>(
        `SELECT id FROM tasks WHERE status = 'pending' AND owner LIKE $1`,
        [`%:${leaving.child.pid}`],
      );
      const at = Date.now();
      leaving.child.kill('SIGTERM');
      expect(await leaving.exited(), 'a clean drain').to.equal(0);
      const drained = Date.now() - at;
      const handed = rows.map((r) => r.id);
      const ms = handed.length > 0 ? await wentOnAfter(at, claimedSince(at, handed)) : 0;
      record(
        `a worker leaves with SIGTERM (drained in ${drained} ms, ${handed.length} tasks handed over)`,
        ms,
        'its tasks claimed by others',
      );
    }
    {
      const restarting = apis.shift() as ServiceProcess;
      const at = Date.now();
      restarting.child.kill('SIGTERM');
      expect(await restarting.exited()).to.equal(0);
      apis.push(await deployment.api('api-1 again'));
      record('an API process restarts', Date.now() - at, 'it serves again');
    }

    // Every task completes, none failed.
    const ended = await eventually(
      async () =>
        (
          await db().query<{ id: string; status: string; error: unknown }>(
            'SELECT id, status, error FROM tasks ORDER BY id',
          )
        ).rows,
      (rows) => rows.every((r) => r.status === 'completed'),
      20 * 60,
    );
    expect(ended).to.have.length(imports.length + exports.length);
    expect(ended.filter((r) => r.error !== null)).to.deep.equal([]);

    // No two attempts at a task ever ran at once, and each task completed in exactly one.
    const { rows: attempts } = await db().query<Attempt>(
      'SELECT task_id, attempt, owner, claimed_at, ended_at, outcome FROM task_attempts ORDER BY task_id, attempt',
    );
    const byTask = new Map<string, Attempt[]>();
    for (const a of attempts) byTask.set(a.task_id, [...(byTask.get(a.task_id) ?? []), a]);
    expect(byTask.size).to.equal(ended.length);
    for (const [task, list] of byTask) {
      expect(
        list.filter((a) => a.outcome === 'completed'),
        task,
      ).to.have.length(1);
      expect(list.at(-1)?.outcome, task).to.equal('completed');
      for (let i = 1; i < list.length; i++) {
        const [previous, next] = [list[i - 1] as Attempt, list[i] as Attempt];
        expect(previous.ended_at, `${task} attempt ${previous.attempt} ended`).not.to.equal(null);
        expect(
          next.claimed_at.getTime(),
          `${task} attempt ${next.attempt} began after the last ended`,
        ).to.be.at.least((previous.ended_at as Date).getTime());
      }
    }
    const handedOver = attempts.filter((a) => a.outcome === 'lapsed' || a.outcome === 'released');
    report.push(
      `${attempts.length} attempts for ${ended.length} tasks; ${handedOver.length} handed over (lapsed or released)`,
    );

    // Users exact: the base users, one per imported record, and each upserted user with both
    // members from the same import (the upserts of one user applied one after the other).
    const { rows: counts } = await db().query<{ users: number; identities: number }>(
      'SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM identities) AS identities',
    );
    expect(counts[0]).to.deep.equal({
      users: SIZE.users + SIZE.imports * SIZE.records + probed,
      identities: SIZE.imports * SIZE.records + probed,
    });
    const { rows: mixed } = await db().query(
      `SELECT id FROM users WHERE standard_attributes ? 'nickname'
          AND standard_attributes->>'name' IS DISTINCT FROM standard_attributes->>'nickname'`,
    );
    expect(mixed, 'users holding members of two different upserts').to.deep.equal([]);
    const { rows: upserted } = await db().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users WHERE standard_attributes ? 'nickname'`,
    );
    expect(upserted[0]?.n).to.equal(SIZE.upsertPairs * SIZE.records);

    // Each export file whole: its record count, every base user once, no user twice.
    const api = apis[0] as ServiceProcess;
    for (const id of exports) {
      const status = await call(api, 'GET', `/_api/admin/users/export/${id}`);
      const file = await download(status.body.download_url as string);
      const lines = file.text.split('\n').filter((l) => l !== '');
      const records = lines.length - (lines[0]?.startsWith('{') ? 0 : 1);
      expect(records, id).to.equal(status.body.record_count);
      const emails = lines
        .map((l) => /[a-z]+[0-9-]+@cluster\.test/.exec(l)?.[0])
        .filter((e) => e !== undefined);
      expect(new Set(emails).size, `${id}: no user twice`).to.equal(emails.length);
      expect(
        emails.filter((e) => e.startsWith('base')),
        `${id}: every base user`,
      ).to.have.length(SIZE.users);
    }

    process.stdout.write(`\n      ${report.join('\n      ')}\n`);
  });
});
