import { createReadStream, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import chain from 'stream-chain';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { CliError } from '../cli-error.js';
import { csvRecord } from './csv-record.js';

/** The kinds of file `userctl import` reads. */
export type RecordFormat = 'ndjson' | 'json' | 'csv';

/** One record of the file, at its position (zero-based, in file order), or why it cannot be sent. */
export type FileRecord =
  | { readonly position: number; readonly record: Record<string, unknown> }
  | { readonly position: number; readonly problem: string };

/** The format of a file by its name: `.csv`, `.json` (an array), anything else ndjson. */
export function formatOf(file: string): RecordFormat {
  if (/\.csv$/i.test(file)) return 'csv';
  if (/\.json$/i.test(file)) return 'json';
  return 'ndjson';
}

/** A file being read: its records, and how many of its bytes were read so far. */
export interface RecordFile {
  readonly records: AsyncGenerator<FileRecord>;
  bytesRead(): number;
}

/**
 * The records of a file, one at a time (nothing holds the whole file): ndjson lines (blank lines
 * skipped), the elements of a JSON array, or CSV rows under a header of record members. A record
 * that is not a JSON object, or a line that is not JSON, comes with a problem and fails alone.
 */
export async function openRecords(file: string, format: RecordFormat): Promise<RecordFile> {
  const input = createReadStream(file);
  await new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot read ${file}: ${err.code}`)),
    );
  });
  return { records: readRecords(input, file, format), bytesRead: () => input.bytesRead };
}

async function* readRecords(
  input: ReadStream,
  file: string,
  format: RecordFormat,
): AsyncGenerator<FileRecord> {
  let position = 0;
  if (format === 'ndjson') {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line.trim() === '') continue;
      yield asRecord(position++, () => JSON.parse(line));
    }
  } else if (format === 'json') {
    const elements = input.pipe(
      chain([parser({ streamValues: false }), streamArray()], {
        writableObjectMode: false,
        readableObjectMode: true,
      }),
    );
    try {
      for await (const { value } of elements as unknown as AsyncIterable<{ value: unknown }>)
        yield asRecord(position++, () => value);
    } catch (err) {
      throw new CliError(`${file} is not a JSON array of records: ${(err as Error).message}`);
    }
  } else {
    const rows = input.pipe(
      parseCsv({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: false }),
    );
    try {
      for await (const row of rows as AsyncIterable<Record<string, string>>) {
        const read = csvRecord(row);
        yield 'record' in read
          ? { position: position++, record: read.record }
          : { position: position++, problem: read.problem };
      }
    } catch (err) {
      throw new CliError(`${file} is not a CSV file with a header row: ${(err as Error).message}`);
    }
  }
}

function asRecord(position: number, read: () => unknown): FileRecord {
  let value: unknown;
  try {
    value = read();
  } catch (err) {
    return { position, problem: `not JSON: ${(err as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { position, problem: 'a record must be a JSON object' };
  }
  return { position, record: value as Record<string, unknown> };
}
