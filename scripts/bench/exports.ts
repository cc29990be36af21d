import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { to as copyTo } from 'pg-copy-streams';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { kafkaBus } from '../../pipeline/bus/kafka.js';
import { exportMessage } from '../../pipeline/bus/task-message.js';
import type { Pool } from '../../pipeline/db/pool.js';
import { insertTask } from '../../pipeline/db/tasks.js';
import { prepareSnapshot, USER_RECORDS_SQL } from '../../pipeline/export/export-records.js';
import { exportFields } from '../../pipeline/export/pointers.js';
import { createLogger } from '../../pipeline/log.js';
import { newTaskId } from '../../pipeline/tasks/task-id.js';
import { BENCH_SCHEMA } from './bench-schema.js';
import { schemaUrl, startProcess } from './processes.js';
import { type BenchRow, row } from './report.js';

const CONTAINER = 'bench-exports';
const ISSUER = 'http://localhost';

/**
 * The rows of issue 4: an export of every generated user with the default fields, as CSV and as
 * ndjson, by a real worker process (Kafka, Postgres, Azurite), in users/s and the worker's peak
 * RSS, beside `COPY (<the same records>) TO STDOUT` read and discarded in the same run.
 */
export async function benchExports(
  db: Pool,
  databaseUrl: string,
  brokers: string,
  connectionString: string,
  count: number,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const copyRate = await rawCopyRate(db, count);
  log(`COPY of the export records: ${Math.round(copyRate)} users/s`);
  const blobs = await BlobStorage.open({ connectionString }, CONTAINER);
  const rows: BenchRow[] = [];
  for (const format of ['csv', 'ndjson'] as const) {
    const prefix = `bench${Date.now()}.`;
    const worker = await startProcess(
      'pipeline/main.ts',
      [],
      {
        DATABASE_URL: schemaUrl(databaseUrl, BENCH_SCHEMA),
        KAFKA_BROKERS: brokers,
        KAFKA_TOPIC_PREFIX: prefix,
        AZURE_STORAGE_CONNECTION_STRING: connectionString,
        AZURE_STORAGE_CONTAINER: CONTAINER,
      },
      'Pipeline workers running',
    );
    const bus = kafkaBus(brokers.split(','), prefix, createLogger('silent'));
    try {
      const id = newTaskId('export');
      const task = await insertTask(db, {
        id,
        project: 'default',
        kind: 'export',
        message: exportMessage(id),
        options: { format, fields: format === 'csv' ? exportFields(undefined, []) : [] },
        total: 0,
      });
      const started = process.hrtime.bigint();
      await bus.publish({ task_id: task.id, kind: 'export', body: exportMessage(id) });
      const fileName = await completion(db, task.id);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const peakMb = peakRssMb(worker.pid);
      log(
        `export ${format}: ${count} users in ${seconds.toFixed(1)} s, worker peak RSS ${peakMb.toFixed(0)} MB`,
      );
      await blobs.delete(fileName);
      rows.push(
        row(
          `export.${format}.users_per_s`,
          count / seconds,
          'users/s',
          'COPY (same records) TO STDOUT',
          copyRate,
          '>= 0.5x',
        ),
        row(`export.${format}.worker_peak_rss`, peakMb, 'MB', 'goal: 200 MB', 200, '< 200 MB'),
      );
    } finally {
      await bus.close();
      await worker.stop();
    }
  }
  return rows;
}

/** Users/s of the records statement alone: COPY TO STDOUT, bytes counted and dropped. */
async function rawCopyRate(db: Pool, count: number): Promise<number> {
  const client = await db.connect();
  try {
    await prepareSnapshot(client, ISSUER);
    const started = process.hrtime.bigint();
    let bytes = 0;
    await pipeline(
      client.query(copyTo(`COPY (${USER_RECORDS_SQL}) TO STDOUT`)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          bytes += chunk.length;
          done();
        },
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await client.query('COMMIT');
    if (bytes === 0) throw new Error('the records statement wrote nothing');
    return count / seconds;
  } finally {
    client.release();
  }
}

/** Waits for the export task to complete; returns the file's name, or throws if it failed. */
async function completion(db: Pool, id: string): Promise<string> {
  for (;;) {
    const { rows } = await db.query<{ status: string; file_name: string | null; error: unknown }>(
      'SELECT status, file_name, error FROM tasks WHERE id = $1',
      [id],
    );
    const task = rows[0];
    if (task?.status === 'completed') {
      if (!task.file_name) throw new Error(`export failed: ${JSON.stringify(task.error)}`);
      return task.file_name;
    }
    await sleep(100);
  }
}

/** The process's peak resident set (VmHWM) in MB. */
function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  if (!kb) throw new Error('no VmHWM for the worker');
  return Number(kb) / 1024;
}
