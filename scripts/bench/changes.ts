import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../pipeline/db/pool.js';
import { dropSchema, freshSchema, RECORDS, requestBodies } from './imports.js';
import { tasksCompletedAt } from './measure.js';
import { startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const SCHEMA = 'bench_changes';
const IN_FLIGHT = 4;
/** The import's batch (IMPORT_BATCH_SIZE's default): the lag is set against one batch's time. */
const BATCH_RECORDS = 2_000;

interface FeedPage {
  readonly events: { readonly id: string }[];
  readonly next_cursor: string;
}

/**
 * The change feed while the import bench's 100,000 records go in: a consumer long-polls the HTTP
 * feed and times each transaction from its commit (Postgres's commit timestamp) to the page that
 * first brought its events; then the whole import's events are read again from the same cursor as
 * fast as the feed gives them, against the import's records/s.
 */
export async function benchChanges(
  databaseUrl: string,
  brokers: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const projectFile = path.resolve('.bench/changes-project.json');
  mkdirSync('.bench', { recursive: true });
  writeFileSync(projectFile, JSON.stringify({ custom_attributes: [{ name: 'member_id', type: 'string' }] }));
  const service = await startBenchService('changes', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    env: () => ({ PROJECT_CONFIG: projectFile }),
    connections: IN_FLIGHT,
  });
  const feed = async (query: string): Promise<FeedPage> => {
    const res = await fetch(`http://localhost:${service.port}/_api/admin/users/changes?${query}`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    if (res.status !== 200) throw new Error(`the feed answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as FeedPage;
  };
  try {
    await tasksCompletedAt(pool, [
      await service.importRequest('{"identifier":"email","records":[{"email":"warm-up@example.com"}]}'),
    ]);
    const start = (await feed('wait=0')).next_cursor;

    // When each transaction's events were first readable (the transaction id leads an event's id).
    const readable = new Map<string, number>();
    let events = 0;
    const following = (async () => {
      let cursor = start;
      while (events < RECORDS) {
        const page = await feed(`after=${cursor}&limit=1000&wait=5`);
        const now = Date.now();
        for (const event of page.events) {
          const txid = event.id.split('-', 1)[0] as string;
          if (!readable.has(txid)) readable.set(txid, now);
        }
        events += page.events.length;
        cursor = page.next_cursor;
      }
    })();
    const bodies = requestBodies();
    const started = Date.now();
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < bodies.length) ids.push(await service.importRequest(bodies[next++] as string));
      }),
    );
    const importRate = RECORDS / (((await tasksCompletedAt(pool, ids)).getTime() - started) / 1000);
    await Promise.race([
      following,
      sleep(120_000).then(() => Promise.reject(new Error('the feed fell behind'))),
    ]);
    const lags = await commitToReadable(pool, readable);
    const p99 = lags[Math.floor(lags.length * 0.99)] as number;
    const batchMs = (BATCH_RECORDS / importRate) * 1000;
    log(
      `changes: import ${Math.round(importRate)} records/s, lag p99 ${p99} ms (batch ${Math.round(batchMs)} ms)`,
    );

    let read = 0;
    let cursor = start;
    const caughtUpFrom = Date.now();
    while (read < RECORDS) {
      const page = await feed(`after=${cursor}&limit=1000&wait=0`);
      if (page.events.length === 0) throw new Error(`the feed holds ${read} events, not ${RECORDS}`);
      read += page.events.length;
      cursor = page.next_cursor;
    }
    const eventsPerSecond = read / ((Date.now() - caughtUpFrom) / 1000);
    log(`changes: ${read} events read back at ${Math.round(eventsPerSecond)} events/s`);
    return [
      row(
        'changes.lag_p99_ms',
        p99,
        'ms',
        "one import batch's time (2,000 records)",
        batchMs,
        'about a batch',
      ),
      row('changes.events_per_s', eventsPerSecond, 'events/s', "the import's records/s", importRate, '>= 1'),
    ];
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

/**
 * Each transaction's lag from its commit to when its events were readable, in ms, sorted: the
 * commit times are Postgres's (track_commit_timestamp, on in the bench's Postgres), the clock
 * this machine's.
 */
async function commitToReadable(pool: Queryable, readable: Map<string, number>): Promise<number[]> {
  const txids = [...readable.keys()];
  const { rows } = await pool.query<{ txid: string; committed: Date }>(
    `SELECT t AS txid, pg_xact_commit_timestamp((t::bigint % 4294967296)::text::xid) AS committed
       FROM unnest($1::text[]) t`,
    [txids],
  );
  if (rows.some((r) => r.committed === null)) throw new Error('the bench Postgres keeps no commit times');
  return rows.map((r) => (readable.get(r.txid) as number) - r.committed.getTime()).sort((a, b) => a - b);
}
