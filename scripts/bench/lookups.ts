import {
  findUsersByLoginId,
  findUsersByOAuth,
  findUsersByStandardAttribute,
} from '../../pipeline/db/lookups.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { BENCH_PROJECT, BENCH_SCHEMA, generated } from './bench-schema.js';
import { median, throughput } from './measure.js';
import {
  type BenchProcess,
  benchAdminKeys,
  benchPort,
  schemaUrl,
  startBenchScript,
  startProcess,
} from './processes.js';
import { type BenchRow, row } from './report.js';
import { type WrkLoad, type WrkResult, wrk } from './wrk.js';

// This VM stalls a woken process for 1-5 ms now and then (and, when its host is busy, for tens or
// hundreds of ms), in bursts that come and go over seconds, and a lone request needs four wake-ups
// in turn (the API, a backend, the API again, wrk). One burst inside a single long window decides
// its p99. So the lone client runs in short windows, the API and the bare server taking turns, and
// each latency row is the median over the windows: the figure of a typical window, with the same
// bursts falling on both servers alike. Every window's figures are logged.
const LONE_CLIENT_WINDOWS = 5;
const WINDOW_SECONDS = 5;
const CONCURRENT_CLIENTS = 32;
const CONCURRENT_SECONDS = 8;
const WARM_UP_SECONDS = 3;
// Longer than the API pool's 10 s idle timeout, so the connections a loaded warm-up opened are
// closed before anything is measured.
const LONE_CLIENT_WARM_UP_SECONDS = 12;

export interface Lookup {
  readonly name: string;
  readonly document: string;
  /** JSON template of the variables for wrk; `%d` is the generated user number. */
  readonly variables: string;
  /** Draw only user numbers that are multiples of this (only every tenth user has OAuth). */
  readonly step: number;
  /** The same lookup straight through pg: the throughput without HTTP, auth and GraphQL. */
  readonly sql: (db: Pool, i: number) => Promise<unknown>;
  /** Index-scan nodes on `identities` expected in the plan, and the statement to EXPLAIN. */
  readonly explain: { text: string; values: (i: number) => string[] };
}

const USER_FIELDS =
  'id createdAt isDisabled standardAttributes loginIDs { id type } roles { edges { node { key } } } groups { edges { node { key } } }';

export function lookups(): Lookup[] {
  return [
    {
      name: 'getUserByLoginID',
      document: `query ($k: String!, $v: String!) { getUserByLoginID(loginIDKey: $k, loginIDValue: $v) { ${USER_FIELDS} } }`,
      variables: '{"k":"email","v":"user%d@example.com"}',
      step: 1,
      sql: (db, i) => findUsersByLoginId(db, BENCH_PROJECT, [{ key: 'email', value: generated.email(i) }]),
      explain: {
        text: `SELECT user_id FROM identities WHERE project_id = $3 AND type = 'login_id' AND login_id_key = $1 AND login_id = $2`,
        values: (i) => ['email', generated.email(i), BENCH_PROJECT],
      },
    },
    {
      name: 'getUsersByStandardAttribute',
      document: `query ($n: String!, $v: String!) { getUsersByStandardAttribute(attributeName: $n, attributeValue: $v) { ${USER_FIELDS} } }`,
      variables: '{"n":"phone_number","v":"+14152%06d"}',
      step: 1,
      sql: (db, i) => findUsersByStandardAttribute(db, BENCH_PROJECT, 'phone_number', [generated.phone(i)]),
      explain: {
        text: 'SELECT user_id FROM identities WHERE project_id = $2 AND phone_number = $1',
        values: (i) => [generated.phone(i), BENCH_PROJECT],
      },
    },
    {
      name: 'getUserByOAuth',
      document: `query ($a: String!, $s: String!) { getUserByOAuth(oauthProviderAlias: $a, oauthProviderUserID: $s) { ${USER_FIELDS} } }`,
      variables: '{"a":"google","s":"g%d"}',
      step: 10,
      sql: (db, i) =>
        findUsersByOAuth(db, BENCH_PROJECT, [
          { providerAlias: 'google', subjectId: generated.oauthSubject(i - (i % 10)) ?? '' },
        ]),
      explain: {
        text: `SELECT user_id FROM identities WHERE type = 'oauth' AND provider_alias = $1 AND provider_subject_id = $2`,
        values: (i) => ['google', generated.oauthSubject(i - (i % 10)) ?? ''],
      },
    },
  ];
}

/**
 * The rows of issue 2: each lookup over HTTP (driven by wrk), its latency beside the same lookup
 * behind a bare node:http server and its throughput beside the same lookup through pg.
 */
export async function benchLookups(
  db: Pool,
  databaseUrl: string,
  count: number,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  await prewarm(db, BENCH_SCHEMA, log);
  // Each phase runs alone, and every lone-client phase before any loaded one: a loaded phase
  // leaves dozens of idle backends whose exit, when their pool's idle timeout ends them, took this
  // 2-core machine for long enough to lift a lone client's p99 from 2 ms to 7-13 ms.
  const overHttp = await measureOverHttp(lookups(), databaseUrl, count, log);
  const random = () => Math.floor(Math.random() * count);
  const rows: BenchRow[] = [];
  for (const { lookup, api, bare, many } of overHttp) {
    const sqlQps = await throughput(CONCURRENT_CLIENTS, CONCURRENT_SECONDS, async () => {
      await lookup.sql(db, random());
    });
    const scans = await identityIndexScans(db, lookup, random());
    log(`${lookup.name}: plan of the identity probe uses ${scans.join(', ')}`);
    const q = `lookup.${lookup.name}`;
    rows.push(
      row(`${q}.http_p50`, api.p50, 'ms', 'same lookup, bare node:http server (p50)', bare.p50),
      row(`${q}.http_p99`, api.p99, 'ms', 'same lookup, bare node:http server (p99)', bare.p99, '< 3 ms'),
      row(
        `${q}.http_qps_32_clients`,
        many.qps,
        'queries/s',
        'same lookup via pg, 32 clients',
        sqlQps,
        '>= 4000',
      ),
      row(`${q}.identity_index_scans`, scans.length, 'index scans', 'one index probe', 1, '= 1'),
    );
  }
  return rows;
}

interface HttpFigures {
  readonly lookup: Lookup;
  /** The API, one client. */
  readonly api: WrkResult;
  /** scripts/bench/bare-lookup-server.ts, one client. */
  readonly bare: WrkResult;
  /** The API, 32 clients. */
  readonly many: WrkResult;
}

/**
 * Starts the API and the bare lookup server on the generated users, and measures every lookup on
 * each with one client, then on the API with 32.
 */
async function measureOverHttp(
  all: readonly Lookup[],
  databaseUrl: string,
  count: number,
  log: (l: string) => void,
): Promise<HttpFigures[]> {
  const port = benchPort();
  const barePort = port + 1;
  const { jwksFile, token } = await benchAdminKeys('lookups', port);
  const DATABASE_URL = schemaUrl(databaseUrl, BENCH_SCHEMA);
  const servers: BenchProcess[] = [];
  try {
    // One at a time, so that a server that started is stopped even when the next fails to start.
    servers.push(
      await startProcess(
        'api/main.ts',
        [],
        { PORT: String(port), DATABASE_URL, ADMIN_JWKS_FILE: jwksFile },
        'Admin API on',
      ),
    );
    servers.push(
      await startBenchScript(
        'scripts/bench/bare-lookup-server.ts',
        { PORT: String(barePort), DATABASE_URL },
        'bare lookup server on',
      ),
    );
    const load = (lookup: Lookup, url: string): WrkLoad => ({
      url,
      token,
      document: lookup.document,
      variables: lookup.variables,
      users: count,
      step: lookup.step,
    });
    const onApi = (lookup: Lookup) => load(lookup, `http://localhost:${port}/_api/admin/graphql`);
    const onBare = (lookup: Lookup) => load(lookup, `http://localhost:${barePort}/${lookup.name}`);
    const turns = await loneClientTurns(all, onApi, onBare, ['API', 'bare server'], log);
    const figures: HttpFigures[] = [];
    for (const { lookup, a: api, b: bare } of turns) {
      const many = await wrk(onApi(lookup), CONCURRENT_CLIENTS, CONCURRENT_SECONDS);
      const failures = api.failures + bare.failures + many.failures;
      if (failures > 0) throw new Error(`${lookup.name}: ${failures} answers had errors or no user`);
      figures.push({ lookup, api, bare, many });
    }
    return figures;
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** One lookup's typical lone-client window on each of two servers. */
export interface LoneClientTurns {
  readonly lookup: Lookup;
  readonly a: WrkResult;
  readonly b: WrkResult;
}

/**
 * Measures every lookup with one client on two servers taking turns, window by window, after
 * warming both up: each one's typical window (the median), every window logged under `names`.
 */
export async function loneClientTurns(
  all: readonly Lookup[],
  onA: (lookup: Lookup) => WrkLoad,
  onB: (lookup: Lookup) => WrkLoad,
  names: readonly [string, string],
  log: (l: string) => void,
): Promise<LoneClientTurns[]> {
  // Steady state before measuring anything. On this machine a fresh server process answers a
  // lone client with a p99 of 3-4 ms at first and 1.2-2.3 ms once it has served a few tens of
  // thousands of requests, so every lookup is warmed up on both, loaded and alone, before the
  // first is measured.
  for (const lookup of all) {
    for (const target of [onA(lookup), onB(lookup)]) {
      await wrk(target, CONCURRENT_CLIENTS, WARM_UP_SECONDS);
      await wrk(target, 1, LONE_CLIENT_WARM_UP_SECONDS);
    }
  }
  const turns: LoneClientTurns[] = [];
  for (const lookup of all) {
    await wrk(onA(lookup), 1, WARM_UP_SECONDS);
    await wrk(onB(lookup), 1, WARM_UP_SECONDS);
    const a: WrkResult[] = [];
    const b: WrkResult[] = [];
    for (let w = 0; w < LONE_CLIENT_WINDOWS; w++) {
      a.push(await wrk(onA(lookup), 1, WINDOW_SECONDS));
      b.push(await wrk(onB(lookup), 1, WINDOW_SECONDS));
    }
    log(
      `${lookup.name}: one client, p50/p99 ms per ${WINDOW_SECONDS} s window: ` +
        `${names[0]} ${windows(a)}; ${names[1]} ${windows(b)}`,
    );
    turns.push({ lookup, a: typicalWindow(a), b: typicalWindow(b) });
  }
  return turns;
}

/** The median window's latencies and requests/s; the failures of all windows. */
function typicalWindow(results: readonly WrkResult[]): WrkResult {
  return {
    qps: median(results.map((r) => r.qps)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    failures: results.reduce((sum, r) => sum + r.failures, 0),
  };
}

function windows(results: readonly WrkResult[]): string {
  return results.map((r) => `${r.p50.toFixed(2)}/${r.p99.toFixed(2)}`).join(' ');
}

/**
 * Loads the generated tables and their indexes into Postgres's shared buffers (sized by
 * scripts/services/postgres.sh to hold them), so that the latencies are those of a server whose
 * working set is in memory, as a production lookup database's is, and not of the disk.
 */
export async function prewarm(db: Pool, schema: string, log: (l: string) => void): Promise<void> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm SCHEMA public');
  } catch (err) {
    log(`pg_prewarm is not installed (${String(err)}): measuring with whatever is cached`);
    return;
  }
  const { rows } = await db.query<{ blocks: string }>(
    `SELECT sum(public.pg_prewarm(c.oid::regclass))::bigint AS blocks FROM pg_class c
      WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'i')`,
    [schema],
  );
  log(`prewarmed ${rows[0]?.blocks} blocks of ${schema} into shared buffers`);
}

async function identityIndexScans(db: Pool, lookup: Lookup, i: number): Promise<string[]> {
  const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON) ${lookup.explain.text}`,
    lookup.explain.values(i),
  );
  const found: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (typeof node['Node Type'] === 'string' && node['Node Type'].includes('Scan')) {
      found.push(`${node['Node Type']} on ${String(node['Index Name'] ?? node['Relation Name'])}`);
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  const plans = (rows[0]?.['QUERY PLAN'] ?? []) as { Plan: Record<string, unknown> }[];
  for (const plan of plans) walk(plan.Plan);
  return found.filter((s) => s.startsWith('Index'));
}
