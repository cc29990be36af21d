// `make bench`: generates the data, measures every performance goal of the issues, prints the table
// and writes .bench/results.json, a row as soon as it is measured. Each row is compared with a
// baseline measured in the same run. Each section starts once the database is idle.
import { execFileSync } from 'node:child_process';
import { benchApiMemory } from './api-memory.js';
import { deleteBenchContainers } from './bench-containers.js';
import { benchUsers } from './bench-schema.js';
import { benchChanges } from './changes.js';
import { benchCluster } from './cluster.js';
import { benchExportFilter } from './export-filter.js';
import { benchExports } from './exports.js';
import { benchFileImport } from './file-imports.js';
import { benchImport } from './imports.js';
import { benchLiveMigration } from './live-migration.js';
import { benchLookups } from './lookups.js';
import { waitUntilIdle } from './measure.js';
import { BenchReport, type BenchRow } from './report.js';
import { benchSearch } from './search.js';
import { benchSearchWal } from './search-wal.js';
import { benchTaskLeases } from './task-leases.js';
import { benchTenancy } from './tenancy.js';
import { benchSmallImportUnderBacklog } from './tenancy-backlog.js';
import { benchImportsOfManyProjects } from './tenancy-imports.js';
import { benchLookupsOfManyProjects } from './tenancy-lookups.js';
import { benchUpkeep } from './upkeep.js';
import { benchUserctl } from './userctl.js';

const url = process.env.BENCH_DATABASE_URL;
const clickhouse = process.env.BENCH_CLICKHOUSE_URL;
const brokers = process.env.BENCH_KAFKA_BROKERS;
const blobs = process.env.BENCH_AZURE_STORAGE_CONNECTION_STRING;
const cluster = process.env.BENCH_KAFKA_CLUSTER_BROKERS;
if (!url || !brokers || !blobs || !clickhouse || !cluster) {
  process.stderr.write(
    'BENCH_DATABASE_URL, BENCH_KAFKA_BROKERS, BENCH_KAFKA_CLUSTER_BROKERS, BENCH_AZURE_STORAGE_CONNECTION_STRING or BENCH_CLICKHOUSE_URL is not set: run `make bench`\n',
  );
  process.exit(2);
}
// "lookups", "export", "search", "import", "import-file", "userctl", "api-memory", "cluster", "tenancy", "tenancy-backlog", "tenancy-imports", "tenancy-lookups" or "live-migration": one section, for development.
const only = process.env.BENCH_ONLY;
const users = Number(process.env.BENCH_USERS ?? 1_000_000);
const log = (line: string) => process.stdout.write(`${line}\n`);
const report = new BenchReport();

/** Runs `measure` with the three-broker cluster up, and stops the cluster after it. */
async function withKafkaCluster<T>(measure: () => Promise<T>): Promise<T> {
  const script = 'scripts/services/kafka-cluster.sh';
  execFileSync(script, ['start'], { stdio: 'inherit' });
  try {
    return await measure();
  } finally {
    execFileSync(script, ['stop'], { stdio: 'inherit' });
  }
}

/**
 * Runs a section when it is asked for, once the database is idle, and records its rows; its files
 * are deleted after it, whether it passed or not.
 */
async function section(name: string, measure: () => Promise<BenchRow[]>): Promise<void> {
  if (only !== undefined && only !== name) return;
  const waited = await waitUntilIdle(url as string);
  if (waited >= 1000) log(`${name}: waited ${(waited / 1000).toFixed(1)} s for the database to be idle`);
  try {
    report.add(await measure());
  } finally {
    await deleteBenchContainers(blobs as string);
  }
}

try {
  if (only === undefined || only === 'lookups' || only === 'search') {
    const db = await benchUsers(url, users, log);
    try {
      await section('lookups', () => benchLookups(db, url, users, log));
      await section('search', () => benchSearch(db, url, brokers, clickhouse, users, log));
    } finally {
      await db.end();
    }
  }
  await section('export', () => benchExports(url, brokers, blobs, users, log));
  await section('import', () => benchImport(url, brokers, blobs, log));
  await section('changes', () => benchChanges(url, brokers, log));
  await section('task-leases', () => benchTaskLeases(url, log));
  await section('upkeep', () => benchUpkeep(url, blobs, log));
  await section('search-wal', () => benchSearchWal(url, log));
  await section('export-filter', () => benchExportFilter(url, log));
  await section('import-file', () => benchFileImport(url, brokers, blobs, log));
  await section('userctl', () => benchUserctl(url, brokers, blobs, log));
  await section('api-memory', () => benchApiMemory(url, brokers, log));
  await section('cluster', () => withKafkaCluster(() => benchCluster(url, cluster, log)));
  await section('tenancy', () => benchTenancy(url, brokers, log));
  await section('tenancy-backlog', () => benchSmallImportUnderBacklog(url, brokers, log));
  await section('tenancy-imports', () => benchImportsOfManyProjects(url, brokers, log));
  await section('tenancy-lookups', () => benchLookupsOfManyProjects(url, users, log));
  await section('live-migration', () => benchLiveMigration(url, users, log));
} finally {
  report.print();
}
