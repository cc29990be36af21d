// `make bench`: generates the data, measures every performance goal of the issues, prints the table
// and writes .bench/results.json. Each row is compared with a baseline measured in the same run.
import { benchApiMemory } from './api-memory.js';
import { benchUsers } from './bench-schema.js';
import { benchCluster } from './cluster.js';
import { benchExports } from './exports.js';
import { benchImport } from './imports.js';
import { benchLookups } from './lookups.js';
import { report } from './report.js';
import { benchSearch } from './search.js';
import { benchUserctl } from './userctl.js';

const url = process.env.BENCH_DATABASE_URL;
const clickhouse = process.env.BENCH_CLICKHOUSE_URL;
const brokers = process.env.BENCH_KAFKA_BROKERS;
const blobs = process.env.BENCH_AZURE_STORAGE_CONNECTION_STRING;
const cluster = process.env.BENCH_KAFKA_CLUSTER_BROKERS;
if (!url || !brokers || !blobs || !clickhouse || !cluster)
  throw new Error(
    'BENCH_DATABASE_URL, BENCH_KAFKA_BROKERS, BENCH_KAFKA_CLUSTER_BROKERS, BENCH_AZURE_STORAGE_CONNECTION_STRING or BENCH_CLICKHOUSE_URL is not set: run `make bench`',
  );
// "lookups", "export", "search", "import", "userctl", "api-memory" or "cluster": one section, for development.
const only = process.env.BENCH_ONLY;
const users = Number(process.env.BENCH_USERS ?? 1_000_000);
const log = (line: string) => process.stdout.write(`${line}\n`);

const rows = [];
if (only === undefined || only === 'lookups' || only === 'search') {
  const db = await benchUsers(url, users, log);
  try {
    if (only === undefined || only === 'lookups') rows.push(...(await benchLookups(db, url, users, log)));
    if (only === undefined || only === 'search')
      rows.push(...(await benchSearch(db, url, brokers, clickhouse, users, log)));
  } finally {
    await db.end();
  }
}
if (only === undefined || only === 'export')
  rows.push(...(await benchExports(url, brokers, blobs, users, log)));
if (only === undefined || only === 'import') rows.push(...(await benchImport(url, brokers, log)));
if (only === undefined || only === 'userctl') rows.push(...(await benchUserctl(url, brokers, blobs, log)));
if (only === undefined || only === 'api-memory') rows.push(...(await benchApiMemory(url, brokers, log)));
if (only === undefined || only === 'cluster') rows.push(...(await benchCluster(url, cluster, log)));
report(rows);
