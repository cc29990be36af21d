import { createInterface } from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import chain from 'stream-chain';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { CSV_OPTIONS, csvFileRecord, defaultMapping } from '../../records/file-records.js';
import type { ImportFileSource } from '../../schemas/index.js';

/**
 * One record of an uploaded file as it is taken in: where it is in the file (an ndjson or CSV line,
 * counted from 1; a JSON array's index, from 0) and its JSON text, or why it cannot be read.
 */
export type FileLine =
  | { readonly position: number; readonly text: string }
  | { readonly position: number; readonly problem: string };

/** What a file's position counts: lines, or the elements of a JSON array. */
export function positionName(format: ImportFileSource['format']): 'line' | 'index' {
  return format === 'json' ? 'index' : 'line';
}

/**
 * The records of a file's text (decompressed), in file order, nothing held but the record at hand:
 * ndjson lines (blank ones skipped; a line is not parsed here, so a bad one fails alone when its
 * batch is read), the elements of a JSON array, or CSV rows mapped to record members (a row that
 * cannot be read fails alone). Text that stops parsing as the format ends the file with one
 * problem naming where (`unreadable`, which throws instead for a fault of the store itself).
 */
export async function* fileLines(
  input: Readable,
  source: Pick<ImportFileSource, 'format' | 'columns'>,
  unreadable: (err: Error) => string,
): AsyncGenerator<FileLine> {
  if (source.format === 'ndjson') {
    let line = 0;
    try {
      for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
        line++;
        if (text.trim() !== '') yield { position: line, text };
      }
    } catch (err) {
      yield { position: line + 1, problem: unreadable(err as Error) };
    }
    return;
  }
  if (source.format === 'json') {
    let index = 0;
    const elements = pipeline(
      input,
      chain([parser({ streamValues: false }), streamArray()], {
        writableObjectMode: false,
        readableObjectMode: true,
      }),
      () => {},
    ) as AsyncIterable<{ value: unknown }>;
    try {
      for await (const { value } of elements) yield { position: index++, text: JSON.stringify(value) };
    } catch (err) {
      yield { position: index, problem: unreadable(err as Error) };
    }
    return;
  }
  yield* csvLines(input, source.columns, unreadable);
}

/**
 * CSV rows under the file's header, each mapped: a column `columns` names fills the member it
 * gives (`""`: left out, as asked), any other column the member its header names.
 */
async function* csvLines(
  input: Readable,
  columns: ImportFileSource['columns'],
  unreadable: (err: Error) => string,
): AsyncGenerator<FileLine> {
  // Rows that cannot be read are told as the parser meets them, which may be ahead of the rows
  // read so far: each is given out in its place, before the first row after it.
  let skipped: FileLine[] = [];
  const skippedBefore = (line: number) => {
    const before = skipped.filter((s) => s.position < line);
    skipped = skipped.filter((s) => s.position >= line);
    return before;
  };
  const rows = parseCsv({ ...CSV_OPTIONS, info: true, skip_records_with_error: true });
  rows.on('skip', (err: Error & { lines?: number }) => {
    skipped.push({ position: err.lines ?? 0, problem: `not a CSV row: ${err.message}` });
  });
  let lastLine = 0;
  let mapping: ImportFileSource['columns'];
  try {
    for await (const { record, info } of pipeline(input, rows, () => {}) as AsyncIterable<{
      record: Record<string, string>;
      info: { lines: number };
    }>) {
      yield* skippedBefore(info.lines);
      lastLine = info.lines;
      mapping ??= { ...defaultMapping(Object.keys(record)), ...columns };
      const read = csvFileRecord(info.lines, record, mapping);
      yield 'record' in read
        ? { position: info.lines, text: JSON.stringify(read.record) }
        : { position: info.lines, problem: 'problem' in read ? read.problem : 'not a record' };
    }
    yield* skippedBefore(Number.POSITIVE_INFINITY);
  } catch (err) {
    yield* skippedBefore(Number.POSITIVE_INFINITY);
    yield { position: lastLine + 1, problem: unreadable(err as Error) };
  }
}
