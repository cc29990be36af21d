import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { to as copyTo } from 'pg-copy-streams';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { projectPrefix } from '../../pipeline/blob/task-files.js';
import { kafkaBus } from '../../pipeline/bus/kafka.js';
import { exportMessage } from '../../pipeline/bus/task-message.js';
import { createPool, type Pool } from '../../pipeline/db/pool.js';
import { insertTask } from '../../pipeline/db/tasks/admission.js';
import { withSnapshot } from '../../pipeline/db/transaction.js';
import { exportFields } from '../../pipeline/export/pointers.js';
import { prepareSnapshot, streamUserRows } from '../../pipeline/export/user-rows.js';
import { snapshotSettings, writeRecords } from '../../pipeline/export/write-records.js';
import { createLogger } from '../../pipeline/log.js';
import type { ExportTaskOptions } from '../../schemas/index.js';
import { newTaskId } from '../../schemas/task-id.js';
import { BENCH_PROJECT } from './bench-schema.js';
import { exportSchema, exportUsers } from './export-data.js';
import { COMPLETION_POLL_MS, rounds } from './measure.js';
import { BENCH_KAFKA_TOPICS, schemaUrl, startProcess } from './processes.js';
import { type BenchRow, row } from './report.js';

const CONTAINER = 'bench-exports';
const FORMATS = ['csv', 'ndjson'] as const;
/** The smaller project of the memory comparison, and the one of the fixed cost. */
const SMALL = 100_000;
const TINY = 4;
/** Linux's clock ticks per second (USER_HZ), the unit of CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100;

/** Every table the export reads: the flat read is `COPY <table> TO STDOUT` of each, one after the other. */
const EXPORT_TABLES = [
  'users',
  'identities',
  'authenticators',
  'verified_claims',
  'user_roles',
  'roles',
  'user_groups',
  'groups',
];

type Format = (typeof FORMATS)[number];

/** What each format's export must reach against the flat read (CSV encodes more per user). */
const SPEED_GOAL: Record<Format, string> = { csv: '>= 0.4x', ndjson: '>= 0.5x' };

/**
 * How often the snapshot's watch looks at pg_stat_activity. Both of its times end at the last look,
 * so a slow look moves them together and leaves their ratio; a quick one would take from the
 * export the cores it is timed on.
 */
const SNAPSHOT_POLL_MS = 100;

interface ExportRun {
  readonly seconds: number;
  readonly firstBlockSeconds: number;
  readonly peakMb: number;
  readonly snapshot: SnapshotHeld;
}

/** How long the export's snapshot transaction lived, and how much of it its records were read in. */
interface SnapshotHeld {
  readonly heldSeconds: number;
  readonly readingSeconds: number;
}

/**
 * The rows of issue 16: exports of the realistic data set (export-data.ts) with the default
 * fields, as CSV and as ndjson, each by a fresh worker process (Kafka, Postgres, Azurite): users/s
 * against a flat read of the same tables, the time to the first block, the worker's peak RSS at
 * 100k and at `count` users, and the whole export of 4 users (the fixed cost). Speeds are the best
 * of the rounds (measure.ts), each round reading flat first; peaks are the highest, at either size.
 */
export async function benchExports(
  databaseUrl: string,
  brokers: string,
  connectionString: string,
  count: number,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const blobs = await BlobStorage.open({ connectionString }, CONTAINER);
  const run = (users: number, format: Format) =>
    exportOnce(databaseUrl, brokers, connectionString, blobs, users, format, log);
  const large = await exportUsers(databaseUrl, count, log);
  const sizes = [SMALL, TINY].filter((n) => n < count);
  for (const n of sizes) await (await exportUsers(databaseUrl, n, log)).end();
  try {
    // Each round: the baselines, then each format's large and tiny export; the best of each kept.
    const measured = await rounds(async () => {
      const flatRate = await flatReadRate(large, count);
      const statementRate = await recordsStatementRate(large, count);
      log(
        `flat read: ${Math.round(flatRate)} users/s, records statement: ${Math.round(statementRate)} users/s`,
      );
      const exports = {
        full: new Map<Format, ExportRun>(),
        small: new Map<Format, ExportRun>(),
        tiny: new Map<Format, ExportRun>(),
      };
      const encoded = new Map<Format, number>();
      for (const format of FORMATS) {
        exports.full.set(format, await run(count, format));
        // The 100k peak, the baseline of the large one's, is the highest of as many runs as it.
        if (sizes.includes(SMALL)) exports.small.set(format, await run(SMALL, format));
        exports.tiny.set(format, await run(TINY, format));
        encoded.set(format, await encodedRate(large, count, format));
      }
      return { flatRate, statementRate, encoded, ...exports };
    });
    const flatRate = Math.max(...measured.map((m) => m.flatRate));
    const rows: BenchRow[] = [
      row(
        'export.records_statement.users_per_s',
        Math.max(...measured.map((m) => m.statementRate)),
        'users/s',
        'flat read (COPY each table)',
        flatRate,
      ),
    ];
    for (const format of FORMATS) {
      const full = bestRun(measured.map((m) => m.full.get(format) as ExportRun));
      const tiny = bestRun(measured.map((m) => m.tiny.get(format) as ExportRun));
      const small = sizes.includes(SMALL)
        ? bestRun(measured.map((m) => m.small.get(format) as ExportRun))
        : full;
      rows.push(
        row(
          `export.${format}.users_per_s`,
          count / full.seconds,
          'users/s',
          'flat read (COPY each table)',
          flatRate,
          SPEED_GOAL[format],
        ),
        row(
          `export.${format}.worker_peak_rss`,
          full.peakMb,
          'MB',
          `peak RSS at ${SMALL} users`,
          small.peakMb,
          '< 200 MB, <= 1.2x',
        ),
        row(`export.${format}.worker_peak_rss_100k`, small.peakMb, 'MB', 'goal: 200 MB', 200, '< 200 MB'),
        row(
          `export.${format}.first_block_s`,
          full.firstBlockSeconds,
          's',
          `whole export of ${count}`,
          full.seconds,
        ),
        row(`export.${format}.tiny_export_s`, tiny.seconds, 's', `whole export of ${count}`, full.seconds),
        row(
          `export.${format}.encoded_users_per_s`,
          Math.max(...measured.map((m) => m.encoded.get(format) as number)),
          'users/s',
          'records statement alone',
          Math.max(...measured.map((m) => m.statementRate)),
        ),
      );
      if (format === 'ndjson')
        rows.push(
          row(
            'export.snapshot_held_s',
            full.snapshot.heldSeconds,
            's',
            `reading and writing the ${count} users' records in it`,
            full.snapshot.readingSeconds,
            '<= 1.05x',
          ),
        );
    }
    return rows;
  } finally {
    await large.end();
  }
}

/** The rounds' best export: the shortest times, and the highest peak (a bound is kept honest). */
function bestRun(runs: readonly ExportRun[]): ExportRun {
  return {
    seconds: Math.min(...runs.map((r) => r.seconds)),
    firstBlockSeconds: Math.min(...runs.map((r) => r.firstBlockSeconds)),
    peakMb: Math.max(...runs.map((r) => r.peakMb)),
    snapshot: runs.reduce(
      (best, r) =>
        r.snapshot.heldSeconds / r.snapshot.readingSeconds < best.heldSeconds / best.readingSeconds
          ? r.snapshot
          : best,
      runs[0]?.snapshot as SnapshotHeld,
    ),
  };
}

/** One export of the data set of `users` users by a fresh worker: its time, first block and peak RSS. */
async function exportOnce(
  databaseUrl: string,
  brokers: string,
  connectionString: string,
  blobs: BlobStorage,
  users: number,
  format: Format,
  log: (l: string) => void,
): Promise<ExportRun> {
  const prefix = `bench${Date.now()}.`;
  const url = schemaUrl(databaseUrl, exportSchema(users));
  const env = {
    DATABASE_URL: url,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    AZURE_STORAGE_CONNECTION_STRING: connectionString,
    AZURE_STORAGE_CONTAINER: CONTAINER,
  };
  const worker = await startProcess('pipeline/main.ts', [], env, 'Pipeline workers running');
  const bus = kafkaBus(brokers.split(','), prefix, createLogger('silent'), { topics: BENCH_KAFKA_TOPICS });
  const db = createPool({ connectionString: databaseUrl, schema: exportSchema(users), max: 2 });
  try {
    const id = newTaskId('export');
    await insertTask(db, {
      id,
      project: 'default',
      kind: 'export',
      message: exportMessage(id),
      options: exportOptions(format),
      total: 0,
    });
    const startedAt = Date.now();
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    await bus.publish({ task_id: id, kind: 'export', body: exportMessage(id) });
    const polling = new AbortController(); // a failed export must not leave the poll running
    const firstBlock = firstBlockSeconds(
      blobs,
      `${projectPrefix('default')}default-${id}`,
      elapsed,
      polling.signal,
    );
    const snapshot = snapshotHeld(db, polling.signal);
    const { fileName, completedAt } = await completion(db, id).finally(() => polling.abort());
    const seconds = (completedAt.getTime() - startedAt) / 1000;
    // The first block cannot come after the end (the poll that bounds it may stop a little late).
    const result = {
      seconds,
      firstBlockSeconds: Math.min(await firstBlock, seconds),
      peakMb: peakRssMb(worker.pid),
      snapshot: await snapshot,
    };
    log(
      `export ${format}: ${users} users in ${seconds.toFixed(2)} s, first block after ${result.firstBlockSeconds.toFixed(2)} s, worker peak RSS ${result.peakMb.toFixed(0)} MB, worker CPU ${cpuSeconds(worker.pid).toFixed(1)} s`,
    );
    await blobs.delete(fileName);
    return result;
  } finally {
    await db.end();
    await bus.close();
    await worker.stop();
  }
}

/**
 * Seconds until the first blob of the task appears, staged blocks included (polled). Once the
 * export has ended (`signal`), the time of its end: a bound for an export quicker than one poll.
 */
async function firstBlockSeconds(
  blobs: BlobStorage,
  prefix: string,
  elapsed: () => number,
  signal: AbortSignal,
): Promise<number> {
  for (;;) {
    if (signal.aborted || (await blobs.list(prefix, { uncommitted: true })).length > 0) return elapsed();
    await sleep(10);
  }
}

/**
 * Watches the export's snapshot from Postgres's side (pg_stat_activity, its clock):
 * the transaction of the backend that runs the export's first records statement, from its start
 * to its end, and from that statement's start to the same end (reading the records and writing
 * the file). Their difference is what else the export does while holding its snapshot.
 */
async function snapshotHeld(db: Pool, signal: AbortSignal): Promise<SnapshotHeld> {
  // Times as seconds since the epoch (microseconds kept: a Date would lose them, and the
  // transaction would no longer be found by its start).
  type Seen = { pid: number; xact_start: string; began: number; query_start: number; now: number };
  let watched: Seen | undefined;
  let lastSeen: number | undefined;
  while (!signal.aborted) {
    const { rows } = await db.query<Seen & { seen: boolean }>(
      `SELECT pid, xact_start::text, extract(epoch FROM xact_start)::float8 AS began,
              extract(epoch FROM query_start)::float8 AS query_start, extract(epoch FROM clock_timestamp())::float8 AS now
         FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COPY (%'
          AND ($1::int IS NULL OR (pid = $1 AND xact_start::text = $2))
        ORDER BY query_start LIMIT 1`,
      [watched?.pid ?? null, watched?.xact_start ?? null],
    );
    const seen = rows[0];
    if (watched && !seen) break;
    watched ??= seen;
    lastSeen = seen?.now ?? lastSeen;
    await sleep(SNAPSHOT_POLL_MS);
  }
  if (!watched || !lastSeen) return { heldSeconds: 0, readingSeconds: 0 };
  return { heldSeconds: lastSeen - watched.began, readingSeconds: lastSeen - watched.query_start };
}

/** Users/s of reading every table the export reads, flat: `COPY <table> TO STDOUT` of each in turn. */
async function flatReadRate(db: Pool, count: number): Promise<number> {
  const client = await db.connect();
  try {
    const started = process.hrtime.bigint();
    for (const table of EXPORT_TABLES) await drain(client.query(copyTo(`COPY ${table} TO STDOUT`)));
    return count / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    client.release();
  }
}

/**
 * Users/s of the records statement alone: COPY TO STDOUT, bytes counted and dropped, in the
 * snapshot transaction an export reads in (its settings name the project).
 */
async function recordsStatementRate(db: Pool, count: number): Promise<number> {
  return withSnapshot(db, async (client) => {
    await prepareSnapshot(client, BENCH_PROJECT);
    const started = process.hrtime.bigint();
    await drain(streamUserRows(client));
    return count / (Number(process.hrtime.bigint() - started) / 1e9);
  });
}

/**
 * Users/s of the export's own work without its store: the records statement read, assembled and
 * encoded as `format` (the default fields) in this process, the file counted and dropped. Beside
 * the records statement alone, it tells whether the Node side or Postgres bounds an export.
 */
async function encodedRate(db: Pool, count: number, format: Format): Promise<number> {
  const options = exportOptions(format);
  return withSnapshot(db, async (client) => {
    const settings = snapshotSettings(options);
    await prepareSnapshot(client, BENCH_PROJECT, settings);
    const started = process.hrtime.bigint();
    const { digest } = await writeRecords(client, settings, options, {
      totpIssuer: 'http://localhost:3000',
      header: true,
      progress: () => {},
      signal: new AbortController().signal,
      sink: async (file) => {
        for await (const _ of file);
      },
    });
    if (digest.bytes === 0) throw new Error('the export bench encoded nothing');
    return count / (Number(process.hrtime.bigint() - started) / 1e9);
  });
}

/** The bench's export options: the default fields (CSV), or the whole record (ndjson). */
function exportOptions(format: Format): ExportTaskOptions {
  return { format, fields: format === 'csv' ? exportFields(undefined, []) : [] };
}

/** Reads a COPY out to its end, counting and dropping its bytes; throws if it wrote nothing. */
async function drain(copy: NodeJS.ReadableStream): Promise<void> {
  let bytes = 0;
  await pipeline(
    copy,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done();
      },
    }),
  );
  if (bytes === 0) throw new Error('a COPY of the export bench wrote nothing');
}

/**
 * Waits for the export task to complete; returns the file's name and when the task completed (by
 * the same clock as Date.now()), or throws if it failed. The time comes from the task row, so the
 * poll can be slow: polling every 20 ms, the bench process used about 5% of a core during an
 * export it was timing.
 */
async function completion(db: Pool, id: string): Promise<{ fileName: string; completedAt: Date }> {
  for (;;) {
    const { rows } = await db.query<{
      status: string;
      file_name: string | null;
      error: unknown;
      completed_at: Date | null;
    }>('SELECT status, file_name, error, completed_at FROM tasks WHERE id = $1', [id]);
    const task = rows[0];
    if (task?.status === 'completed') {
      if (!task.file_name || !task.completed_at)
        throw new Error(`export failed: ${JSON.stringify(task.error)}`);
      return { fileName: task.file_name, completedAt: task.completed_at };
    }
    await sleep(COMPLETION_POLL_MS);
  }
}

/** The CPU time the process has used so far (user and system), in seconds. */
function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The process's peak resident set (VmHWM) in MB. */
function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  if (!kb) throw new Error('no VmHWM for the worker');
  return Number(kb) / 1024;
}
