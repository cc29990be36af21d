import { createInterface } from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import chain from 'stream-chain';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { CSV_OPTIONS, type FileRecord, jsonFileRecord } from '../../records/file-records.js';
import { csvColumnsOf, sourceUser, userConversion, usersMember } from '../../records/from/convert-users.js';
import type { PlanTally } from '../../records/import-plan.js';
import type { ImportFileSource } from '../../schemas/index.js';
import type { FileLine } from './file-lines.js';

/** How a file of another system's users is read: its system and the run's mapping. */
export type ForeignSource = Pick<ImportFileSource, 'format'> & {
  readonly from: NonNullable<ImportFileSource['from']>;
};

/**
 * The records of another system's users file, converted in file order by the conversion `userctl
 * import --from` uses (records/from), each tallied in `tally` as it is read. A record's line holds
 * it with the members its conversion left out: `{"r": record, "u": [paths]}`. A user that cannot be
 * read fails alone; text that stops parsing ends the file with one problem (`unreadable`).
 */
export async function* foreignLines(
  input: Readable,
  source: ForeignSource,
  unreadable: (err: Error) => string,
  tally: PlanTally,
): AsyncGenerator<FileLine> {
  const { system, firebase, mapping } = source.from;
  const conversion = userConversion(system, {
    ...(mapping
      ? {
          mapping: {
            ...(mapping.providers ? { providers: mapping.providers } : {}),
            ...(mapping.roles_from ? { rolesFrom: mapping.roles_from } : {}),
            ...(mapping.groups_from ? { groupsFrom: mapping.groups_from } : {}),
            ...(mapping.attributes ? { attributes: mapping.attributes } : {}),
          },
        }
      : {}),
    ...(firebase
      ? {
          firebase: {
            signerKey: firebase.hash_key,
            saltSeparator: firebase.salt_separator,
            rounds: firebase.rounds,
            memCost: firebase.mem_cost,
          },
        }
      : {}),
  });
  for await (const read of sourceRecords(input, source, unreadable)) {
    const item: FileRecord =
      'record' in read
        ? conversion.convert({
            position: read.position,
            user: sourceUser(system, source.format, read.record),
          })
        : read;
    tally.add(item);
    if ('record' in item)
      yield { position: item.position, text: JSON.stringify({ r: item.record, u: item.unmapped ?? [] }) };
    else if ('problem' in item) yield { position: item.position, problem: item.problem };
    else yield { position: item.position, problem: 'merged into another user of the file' };
  }
}

/** The users of the file as its own format holds them (a line, an element, a row), in file order. */
async function* sourceRecords(
  input: Readable,
  source: ForeignSource,
  unreadable: (err: Error) => string,
): AsyncGenerator<FileRecord> {
  const { format } = source;
  const { system } = source.from;
  let position = format === 'json' ? 0 : 1;
  try {
    if (format === 'ndjson') {
      for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
        if (text.trim() !== '') yield jsonFileRecord(position, () => JSON.parse(text));
        position++;
      }
    } else if (format === 'json') {
      const member = usersMember(system);
      const stages = [
        parser({ streamValues: false }),
        ...(member ? [pick({ filter: member })] : []),
        streamArray(),
      ];
      const elements = pipeline(
        input,
        chain(stages, { writableObjectMode: false, readableObjectMode: true }),
        () => {},
      ) as AsyncIterable<{ value: unknown }>;
      for await (const { value } of elements) yield jsonFileRecord(position++, () => value);
    } else {
      const columns = csvColumnsOf(system);
      const rows = parseCsv({ ...CSV_OPTIONS, ...(columns ? { columns: [...columns] } : {}), info: true });
      for await (const { record, info } of pipeline(input, rows, () => {}) as AsyncIterable<{
        record: Record<string, string>;
        info: { lines: number };
      }>) {
        position = info.lines + 1;
        yield { position: info.lines, record };
      }
    }
  } catch (err) {
    yield { position, problem: unreadable(err as Error) };
  }
}
