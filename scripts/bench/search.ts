import { setTimeout as sleep } from 'node:timers/promises';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { kafkaClient } from '../../pipeline/bus/kafka-client.js';
import { findUsersByLoginId } from '../../pipeline/db/lookups.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { searchDocuments } from '../../pipeline/db/search-documents.js';
import { recordUserChanges } from '../../pipeline/db/user-changes.js';
import { createLogger } from '../../pipeline/log.js';
import { clickhouseUserSearch } from '../../pipeline/search/clickhouse-user-search.js';
import { postgresUserSearch } from '../../pipeline/search/postgres-user-search.js';
import { reindexSearch } from '../../pipeline/search/reindex.js';
import { searchRow } from '../../pipeline/search/search-rows.js';
import { LIVE_TABLE, openSearchStore } from '../../pipeline/search/search-store.js';
import {
  ensureUserChangesTopic,
  startSearchSink,
  startUserChangeRelay,
} from '../../pipeline/search/user-change-stream.js';
import type { UserSearch, UserSearchIndex } from '../../pipeline/search/user-search.js';
import { BENCH_PROJECT, generated } from './bench-schema.js';
import { dropSchema, freshSchema, record } from './imports.js';
import { BENCH_KAFKA_TOPICS, startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const SEARCHES = 300;
const WARM_UP = 30;
const SINK_CHANGES = 100_000;
/** How long the sink may take to index them before the section fails rather than wait on. */
const SINK_WAIT_MS = 10 * 60_000;
const LAG_REQUESTS = 20;
const LAG_RECORDS_PER_REQUEST = 1_000;
const RELAY_INTERVAL_MS = 250;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Milliseconds of each call of `call(i)`, after a warm-up. */
async function latencies(count: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARM_UP; i++) await call(i);
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await call(i + WARM_UP);
    ms.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return ms;
}

/** What the portal's user list asks: a page of 20 and the total, for a partial keyword. */
function portalSearch(users: number, i: number): UserSearch {
  const n = Math.floor(((i * 7919) % users) / 10); // about ten users match "ser<n>" (user<n>, user<n>0..9)
  return {
    keyword: `ser${n}`,
    first: 20,
    start: { kind: 'first' },
    sortBy: 'CREATED_AT',
    direction: 'DESC',
    roleKeys: [],
    groupKeys: [],
  };
}

const searchOnce = (index: UserSearchIndex, users: number) => async (i: number) => {
  const search = portalSearch(users, i);
  await Promise.all([index.page(search), index.count(search)]);
};

/**
 * The rows of issue 14: search p99 at `users` users on Postgres and on ClickHouse, the sink's
 * throughput beside a raw ClickHouse insert of the same rows, and the change-to-searchable lag
 * during a running import.
 */
export async function benchSearch(
  db: Pool,
  url: string,
  brokers: string,
  clickhouseUrl: string,
  users: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const pg = postgresUserSearch(db, BENCH_PROJECT);
  const exact = await latencies(SEARCHES, (i) =>
    findUsersByLoginId(db, BENCH_PROJECT, [{ key: 'email', value: generated.email((i * 7919) % users) }]),
  );
  const onPostgres = await latencies(SEARCHES, searchOnce(pg, users));
  log(`search on Postgres: p50 ${percentile(onPostgres, 50).toFixed(1)} ms`);
  rows.push(
    row(
      'search.postgres.p99_ms',
      percentile(onPostgres, 99),
      'ms',
      'exact login id lookup, same database (p99)',
      percentile(exact, 99),
    ),
  );

  const store = openSearchStore({ url: clickhouseUrl, database: 'bench_search' });
  try {
    const reindexStarted = Date.now();
    const indexed = await reindexSearch(db, store, BENCH_PROJECT);
    log(`search-reindex: ${indexed} users in ${((Date.now() - reindexStarted) / 1000).toFixed(1)} s`);
    const onClickHouse = await latencies(
      SEARCHES,
      searchOnce(clickhouseUserSearch(store, BENCH_PROJECT), users),
    );
    log(`search on ClickHouse: p50 ${percentile(onClickHouse, 50).toFixed(1)} ms`);
    rows.push(
      row(
        'search.clickhouse.p99_ms',
        percentile(onClickHouse, 99),
        'ms',
        'same searches on Postgres (p99)',
        percentile(onPostgres, 99),
      ),
    );
    rows.push(await sinkThroughput(db, store, brokers, users, log));
  } finally {
    await store.close();
  }
  rows.push(...(await searchLag(url, brokers, clickhouseUrl, log)));
  return rows;
}

/**
 * The sink's users/s for SINK_CHANGES changes of as many users (all of them when there are fewer),
 * beside inserting the same rows straight into ClickHouse.
 */
async function sinkThroughput(
  db: Pool,
  store: ReturnType<typeof openSearchStore>,
  brokers: string,
  users: number,
  log: (line: string) => void,
): Promise<BenchRow> {
  // Distinct users spread over the data set: a user changed twice is indexed once, so the wait
  // below would never see as many rows as changes.
  const changes = Math.min(SINK_CHANGES, users);
  const ids = Array.from({ length: changes }, (_, i) => generated.id(Math.floor((i * users) / changes)));
  // Raw: the same rows, read beforehand, inserted in batches of the size the sink meets.
  const prepared = [];
  for (let i = 0; i < ids.length; i += 10_000) {
    for (const doc of await searchDocuments(db, ids.slice(i, i + 10_000)))
      prepared.push(searchRow(BENCH_PROJECT, doc));
  }
  const scratch = 'users_search_raw';
  await store.client.command({ query: `DROP TABLE IF EXISTS ${store.table(scratch)}` });
  await store.createTable(scratch);
  const rawStarted = process.hrtime.bigint();
  for (let i = 0; i < prepared.length; i += 5_000) {
    await store.client.insert({
      table: store.table(scratch),
      values: prepared.slice(i, i + 5_000),
      format: 'JSONEachRow',
    });
  }
  const raw = changes / (Number(process.hrtime.bigint() - rawStarted) / 1e9);
  await store.client.command({ query: `DROP TABLE ${store.table(scratch)}` });

  // The feed: the changes in the outbox, then the relay and the sink of a worker, until the index has them all.
  const quiet = createLogger('warn');
  const prefix = `benchsink${Date.now()}.`;
  const kafka = kafkaClient(brokers.split(','), prefix, quiet);
  await ensureUserChangesTopic(kafka, prefix, BENCH_KAFKA_TOPICS, quiet);
  const since = Date.now() * 1000;
  await recordUserChanges(db, BENCH_PROJECT, ids);
  const started = process.hrtime.bigint();
  const relay = startUserChangeRelay(db, kafka, prefix, quiet);
  const sink = await startSearchSink(db, kafka, store, BENCH_PROJECT, prefix, quiet);
  const deadline = Date.now() + SINK_WAIT_MS;
  try {
    for (;;) {
      const [r] = await (
        await store.client.query({
          query: `SELECT toString(count()) AS n FROM ${store.table(LIVE_TABLE)} WHERE version >= ${since}`,
          format: 'JSONEachRow',
        })
      ).json<{ n: string }>();
      if (Number(r?.n) >= changes) break;
      if (Date.now() > deadline)
        throw new Error(
          `the search sink indexed ${r?.n ?? 0} of ${changes} changes in ${SINK_WAIT_MS / 1000} s`,
        );
      await sleep(50);
    }
  } finally {
    await sink.stop();
    await relay.stop();
  }
  const rate = changes / (Number(process.hrtime.bigint() - started) / 1e9);
  log(`search sink: ${Math.round(rate)} users/s, raw insert ${Math.round(raw)} rows/s`);
  return row('search.sink.users_per_s', rate, 'users/s', 'raw ClickHouse insert of the same rows', raw);
}

/**
 * Change-to-searchable lag during a running import: the API and a worker (ClickHouse configured)
 * import LAG_REQUESTS requests while the index is polled; each user's lag is from its creation in
 * Postgres to the first poll that sees it.
 */
async function searchLag(
  url: string,
  brokers: string,
  clickhouseUrl: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const schema = 'bench_search_lag';
  const pool = await freshSchema(url, schema);
  const database = 'bench_search_lag';
  // Quiet: polling before the sink has made the table fails, as expected.
  const ch = createClient({ url: clickhouseUrl, log: { level: ClickHouseLogLevel.OFF } });
  await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  const service = await startBenchService('search', {
    databaseUrl: url,
    schema,
    brokers,
    env: () => ({ CLICKHOUSE_URL: clickhouseUrl, CLICKHOUSE_DATABASE: database }),
    connections: 2,
  });
  const seen = new Map<string, number>();
  let polling = true;
  try {
    const poller = (async () => {
      let version = '0';
      while (polling) {
        try {
          const found = await (
            await ch.query({
              query: `SELECT user_id, toString(version) AS v FROM ${database}.${LIVE_TABLE} WHERE version > ${version}`,
              format: 'JSONEachRow',
            })
          ).json<{ user_id: string; v: string }>();
          const now = Date.now();
          for (const f of found) {
            if (!seen.has(f.user_id)) seen.set(f.user_id, now);
            if (BigInt(f.v) > BigInt(version)) version = f.v;
          }
        } catch {
          // the table does not exist until the sink has started
        }
        await sleep(50);
      }
    })();
    for (let r = 0; r < LAG_REQUESTS; r++) {
      const records = Array.from({ length: LAG_RECORDS_PER_REQUEST }, (_, i) =>
        record(r * LAG_RECORDS_PER_REQUEST + i),
      );
      await service.importRequest(JSON.stringify({ identifier: 'email', records }));
      await sleep(250); // a steady stream of imports, as an admin's tool sends them
    }
    const total = LAG_REQUESTS * LAG_RECORDS_PER_REQUEST;
    for (let i = 0; i < 1200 && seen.size < total; i++) await sleep(50);
    polling = false;
    await poller;
    const { rows } = await pool.query<{ id: string; ms: string }>(
      'SELECT id, (extract(epoch FROM created_at) * 1000)::bigint::text AS ms FROM users',
    );
    const lags = rows.flatMap((u) => {
      const at = seen.get(u.id);
      return at === undefined ? [] : [Math.max(0, at - Number(u.ms))];
    });
    log(`search lag: ${lags.length} of ${rows.length} users seen in the index`);
    return [
      row(
        'search.lag_p50_ms',
        percentile(lags, 50),
        'ms',
        "the relay's poll interval",
        RELAY_INTERVAL_MS,
        '<= a few s',
      ),
      row(
        'search.lag_p99_ms',
        percentile(lags, 99),
        'ms',
        "the relay's poll interval",
        RELAY_INTERVAL_MS,
        '<= a few s',
      ),
    ];
  } finally {
    polling = false;
    await service.stop();
    await ch.close();
    await pool.end();
    await dropSchema(url, schema);
  }
}
