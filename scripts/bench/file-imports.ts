import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { BlockBlobClient } from '@azure/storage-blob';
import type { Pool } from '../../pipeline/db/pool.js';
import { dropSchema, freshSchema, rawCopy, record } from './imports.js';
import { checkpoint, tasksCompletedAt } from './measure.js';
import { type BenchService, startBenchService } from './processes.js';
import { type BenchRow, row } from './report.js';

const RECORDS = 1_000_000;
const SMALL = 100_000;
const SCHEMA = 'bench_file_import';
/** The batch (and frame) of the measured service: the default. */
const BATCH = 2_000;

/** A gzipped ndjson file of the bench's records 0..count-1 (as the request import sends them). */
function ndjsonGz(count: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(record(i)));
  return gzipSync(`${lines.join('\n')}\n`, { level: 6 });
}

/** A line of /proc/<pid>/status in MB: VmHWM, the process's peak RSS. */
function peakMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

/** A file of the bench is split into this many parts when it is measured split. */
const PARTS = 4;

/** A fresh schema and a service on it with blob storage; `workers` workers; `partBytes`: files split. */
async function fileService(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  workers: number,
  partBytes?: number,
): Promise<{ pool: Pool; service: BenchService }> {
  const pool = await freshSchema(databaseUrl, SCHEMA);
  const service = await startBenchService('fileimport', {
    databaseUrl,
    schema: SCHEMA,
    brokers,
    env: () => ({
      AZURE_STORAGE_CONNECTION_STRING: blobs,
      AZURE_STORAGE_CONTAINER: `bench-files-${Date.now()}`,
      IMPORT_BATCH_SIZE: String(BATCH),
      LOG_LEVEL: 'info',
      ...(partBytes
        ? { IMPORT_FILE_PART_BYTES: String(partBytes), IMPORT_FILE_PARTS_MAX: String(PARTS) }
        : {}),
    }),
  });
  for (let n = 1; n < workers; n++) await service.startWorker();
  return { pool, service };
}

/** Uploads the file through the service's signed URL; the upload's id. */
async function uploadFile(service: BenchService, file: Buffer): Promise<string> {
  const upload = await service.post('/_api/admin/users/import/uploads');
  await new BlockBlobClient(String(upload.upload_url)).uploadData(file, {
    blockSize: 8 * 1024 * 1024,
    concurrency: 4,
  });
  return String(upload.upload_id);
}

/** Starts the import of an upload; the task id. */
function startImport(service: BenchService, uploadId: string): Promise<string> {
  return service.importRequest(
    JSON.stringify({ identifier: 'email', source: { upload_id: uploadId }, format: 'ndjson' }),
  );
}

/** Checks that the task inserted `count` users. */
async function expectInserted(pool: Pool, id: string, count: number): Promise<void> {
  const { rows } = await pool.query<{ inserted: number; users: number }>(
    `SELECT (SELECT (summary->>'inserted')::int FROM tasks WHERE id = $1) AS inserted,
            (SELECT count(*) FROM users)::int AS users`,
    [id],
  );
  if (rows[0]?.inserted !== count || rows[0]?.users !== count)
    throw new Error(`file import bench: expected ${count} inserted, got ${JSON.stringify(rows[0])}`);
}

/**
 * One file import of `count` records by `workers` workers (`split`: in PARTS parts): records/s
 * (upload excluded), the first worker's peak RSS.
 */
async function measureFileImport(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  file: Buffer,
  count: number,
  { workers = 1, split = false }: { workers?: number; split?: boolean } = {},
): Promise<{ rate: number; peakMb: number }> {
  const partBytes = split ? Math.ceil(file.length / PARTS) : undefined;
  const { pool, service } = await fileService(databaseUrl, brokers, blobs, workers, partBytes);
  try {
    const uploadId = await uploadFile(service, file);
    await checkpoint(pool);
    const started = Date.now();
    const id = await startImport(service, uploadId);
    const seconds = ((await tasksCompletedAt(pool, [id])).getTime() - started) / 1000;
    await expectInserted(pool, id, count);
    return { rate: count / seconds, peakMb: peakMb(service.worker.pid) };
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

/**
 * Records read again by the attempt that resumes a file import whose worker was SIGKILLed midway
 * (from its log line `file read`): the sealed copy is read from the frame of the resume point.
 */
async function measureResume(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  file: Buffer,
  count: number,
) {
  const { pool, service } = await fileService(databaseUrl, brokers, blobs, 1);
  try {
    const id = await startImport(service, await uploadFile(service, file));
    for (;;) {
      const { rows } = await pool.query<{ progress_processed: number }>(
        'SELECT progress_processed FROM tasks WHERE id = $1',
        [id],
      );
      if ((rows[0]?.progress_processed ?? 0) >= count / 2) break;
      await sleep(20);
    }
    await service.worker.kill();
    const next = await service.startWorker();
    await tasksCompletedAt(pool, [id]);
    await expectInserted(pool, id, count);
    const read = next
      .output()
      .split('\n')
      .filter((l) => l.includes('"file read"'))
      .map((l) => JSON.parse(l) as { reread: number });
    const reread = read.at(-1)?.reread;
    if (reread === undefined)
      throw new Error('file import bench: the resumed worker did not say what it read');
    return reread;
  } finally {
    await service.stop();
    await pool.end();
    await dropSchema(databaseUrl, SCHEMA);
  }
}

/**
 * A 1M-record ndjson.gz file imported through an upload (the upload not timed) against raw COPY of
 * the same rows; the worker's peak RSS at 1M against 100k; the records read again after a SIGKILL;
 * the file split into parts, two workers against one.
 */
export async function benchFileImport(
  databaseUrl: string,
  brokers: string,
  blobs: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const big = ndjsonGz(RECORDS);
  const small = ndjsonGz(SMALL);
  const copyPool = await freshSchema(databaseUrl, 'bench_file_copy');
  const copyRate = await rawCopy(copyPool, RECORDS).finally(() => copyPool.end());
  await dropSchema(databaseUrl, 'bench_file_copy');
  log(`raw COPY of ${RECORDS} records: ${Math.round(copyRate)} records/s`);
  const one = await measureFileImport(databaseUrl, brokers, blobs, big, RECORDS);
  log(
    `file import of ${RECORDS}: ${Math.round(one.rate)} records/s, worker peak ${one.peakMb.toFixed(0)} MB`,
  );
  const few = await measureFileImport(databaseUrl, brokers, blobs, small, SMALL);
  log(`file import of ${SMALL}: worker peak ${few.peakMb.toFixed(0)} MB`);
  const oneSplit = await measureFileImport(databaseUrl, brokers, blobs, big, RECORDS, { split: true });
  log(`file import of ${RECORDS} in ${PARTS} parts, 1 worker: ${Math.round(oneSplit.rate)} records/s`);
  const two = await measureFileImport(databaseUrl, brokers, blobs, big, RECORDS, { workers: 2, split: true });
  log(`file import of ${RECORDS} in ${PARTS} parts, 2 workers: ${Math.round(two.rate)} records/s`);
  const reread = await measureResume(databaseUrl, brokers, blobs, small, SMALL);
  log(`resumed after a SIGKILL: ${reread} records read again (a batch is ${BATCH})`);
  return [
    row('import.file.records_per_s', one.rate, 'records/s', 'raw COPY of the same rows', copyRate, '>= 0.95'),
    row(
      'import.file.worker_peak_rss',
      one.peakMb,
      'MB',
      `the same at ${SMALL.toLocaleString('en-US')} records`,
      few.peakMb,
      '<= 1.2',
    ),
    row('import.file.resume_reread_records', reread, 'records', 'one batch', BATCH, '<= 1'),
    row(
      'import.file.records_per_s_2_workers',
      two.rate,
      'records/s',
      `one worker, the file in ${PARTS} parts too`,
      oneSplit.rate,
      'as measured on 2 cores (Postgres shares them)',
    ),
  ];
}
