// `make bench`: generates the data, measures every performance goal of the issues, prints the table
// and writes .bench/results.json, a row as soon as it is measured. Each row is compared with a
// baseline measured in the same run. Each section starts once the database is idle.
import { execFileSync } from 'node:child_process';
import type { Pool } from '../../pipeline/db/pool.js';
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
import { countSetting, waitUntilIdle } from './measure.js';
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
// The same server over TCP, as workers on other machines reach it (the export section).
const tcpUrl = process.env.BENCH_DATABASE_TCP_URL;
const clickhouse = process.env.BENCH_CLICKHOUSE_URL;
const brokers = process.env.BENCH_KAFKA_BROKERS;
const blobs = process.env.BENCH_AZURE_STORAGE_CONNECTION_STRING;
const cluster = process.env.BENCH_KAFKA_CLUSTER_BROKERS;
if (!url || !tcpUrl || !brokers || !blobs || !clickhouse || !cluster) {
  process.stderr.write(
    'BENCH_DATABASE_URL, BENCH_DATABASE_TCP_URL, BENCH_KAFKA_BROKERS, BENCH_KAFKA_CLUSTER_BROKERS, BENCH_AZURE_STORAGE_CONNECTION_STRING or BENCH_CLICKHOUSE_URL is not set: run `make bench`\n',
  );
  process.exit(2);
}
const users = countSetting('BENCH_USERS', 1_000_000);
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

/** The users of the lookups and the search (BENCH_USERS), generated when the first of them runs. */
let benchDb: Pool | undefined;
const usersDb = async () => {
  benchDb ??= await benchUsers(url, users, log);
  return benchDb;
};
const closeUsersDb = async () => {
  const db = benchDb;
  benchDb = undefined;
  await db?.end();
};

/**
 * A section of the bench: what it measures, the data it needs made first (`prepare`, before the
 * run waits for the database to be idle), and what it lets go of once measured (`done`).
 */
interface Section {
  readonly prepare?: () => Promise<unknown>;
  readonly measure: () => Promise<BenchRow[]>;
  readonly done?: () => Promise<void>;
}

/** Every section, in the order a whole run measures them; BENCH_ONLY names one, for development. */
const SECTIONS: Record<string, Section> = {
  lookups: { prepare: usersDb, measure: async () => benchLookups(await usersDb(), url, users, log) },
  // The last section that reads the generated users: their pool is not kept open after it.
  search: {
    prepare: usersDb,
    measure: async () => benchSearch(await usersDb(), url, brokers, clickhouse, users, log),
    done: closeUsersDb,
  },
  export: { measure: () => benchExports(tcpUrl, brokers, blobs, users, log) },
  import: { measure: () => benchImport(url, brokers, blobs, log) },
  changes: { measure: () => benchChanges(url, brokers, log) },
  'task-leases': { measure: () => benchTaskLeases(url, log) },
  upkeep: { measure: () => benchUpkeep(url, blobs, log) },
  'search-wal': { measure: () => benchSearchWal(url, log) },
  'export-filter': { measure: () => benchExportFilter(url, log) },
  'import-file': { measure: () => benchFileImport(url, brokers, blobs, log) },
  userctl: { measure: () => benchUserctl(url, brokers, blobs, log) },
  'api-memory': { measure: () => benchApiMemory(url, brokers, log) },
  cluster: { measure: () => withKafkaCluster(() => benchCluster(url, cluster, log)) },
  tenancy: { measure: () => benchTenancy(url, brokers, log) },
  'tenancy-backlog': { measure: () => benchSmallImportUnderBacklog(url, brokers, log) },
  'tenancy-imports': { measure: () => benchImportsOfManyProjects(url, brokers, log) },
  'tenancy-lookups': { measure: () => benchLookupsOfManyProjects(url, users, log) },
  'live-migration': { measure: () => benchLiveMigration(url, users, log) },
};

const only = process.env.BENCH_ONLY;
if (only !== undefined && !Object.hasOwn(SECTIONS, only)) {
  process.stderr.write(
    `BENCH_ONLY=${only} names no section; the sections: ${Object.keys(SECTIONS).join(', ')}\n`,
  );
  process.exit(2);
}

/**
 * Runs a section once its data is made and the database is idle, and records its rows; its files
 * are deleted and what it holds let go after it, whether it passed or not.
 */
async function section(name: string, { prepare, measure, done }: Section): Promise<void> {
  await prepare?.();
  const waited = await waitUntilIdle(url as string);
  if (waited >= 1000) log(`${name}: waited ${(waited / 1000).toFixed(1)} s for the database to be idle`);
  try {
    report.add(await measure());
  } finally {
    await deleteBenchContainers(blobs as string);
    await done?.();
  }
}

try {
  for (const [name, part] of Object.entries(SECTIONS))
    if (only === undefined || only === name) await section(name, part);
} finally {
  await closeUsersDb();
  report.print();
}
