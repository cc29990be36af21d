import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseCsv } from 'csv-parse';
import { CliError, EXIT } from '../cli-error.js';
import { count, progressOnStderr } from '../progress.js';
import { errorMessage, type ServiceClient } from '../service-client.js';

/** What `userctl export` was asked for. */
export interface ExportOptions {
  readonly format: 'csv' | 'ndjson';
  /** `POINTER` or `POINTER:NAME`, in order (csv only). */
  readonly fields: readonly string[];
  /** ndjson records with the stored password hashes (the project must allow it). */
  readonly includePasswordHashes?: boolean;
  /** CSV cells a spreadsheet would run as formulas are written as text (`csv.escape_formulas`). */
  readonly escapeFormulas?: boolean;
  readonly output: string;
  /** Once the file is written whole: follows the change feed from the export's changes_cursor. */
  readonly thenFollow?: (cursor: string) => Promise<number>;
}

interface ExportStatus {
  readonly status: 'pending' | 'completed';
  readonly progress?: { processed: number; total: number };
  readonly download_url?: string;
  /** What proves the file whole: its records, size and SHA-256 (hex). */
  readonly record_count?: number;
  readonly file_bytes?: number;
  readonly file_sha256?: string;
  /** The change feed's position at the export's snapshot. */
  readonly changes_cursor?: string;
  readonly error?: unknown;
  readonly failed_at?: string;
}

const ROUTE = '/_api/admin/users/export';
/** Attempts at a download whose signed URL expired (or failed) before it was read whole. */
const DOWNLOAD_ATTEMPTS = 4;

/**
 * Starts an export, shows its progress, and downloads the file through its signed URL into
 * `output` (written beside it, then renamed: a file there is always whole). A URL that expired is
 * asked for again; the size written is checked against the size sent, and the file against the
 * records, size and SHA-256 the service names: a file that differs fails the command (exit 1).
 */
export async function exportUsers(client: ServiceClient, options: ExportOptions): Promise<number> {
  const body: Record<string, unknown> = { format: options.format };
  if (options.includePasswordHashes) body.include_password_hashes = true;
  if (options.format !== 'csv' && (options.fields.length > 0 || options.escapeFormulas))
    throw new CliError('--field and --escape-formulas apply to --format csv only');
  const csv: Record<string, unknown> = {};
  if (options.fields.length > 0) csv.fields = options.fields.map(fieldOf);
  if (options.escapeFormulas) csv.escape_formulas = true;
  if (Object.keys(csv).length > 0) body.csv = csv;
  const created = await client.call<{ id?: string }>('POST', ROUTE, JSON.stringify(body));
  if (created.status !== 200 || !created.body?.id) {
    throw new CliError(
      `the service refused the export (${created.status}): ${errorMessage(created.body) ?? 'no reason given'}`,
    );
  }
  const id = created.body.id;
  process.stderr.write(`export: task ${id}\n`);
  const progress = progressOnStderr('export');
  const started = Date.now();
  let status: ExportStatus;
  try {
    status = await readStatus(client, id);
    for (let delay = 300; status.status === 'pending'; delay = Math.min(delay * 1.5, 2_000)) {
      const { processed = 0, total = 0 } = status.progress ?? {};
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      progress.update({
        done: processed,
        total,
        detail: `${count(processed)} of ${count(total)} users`,
        rate: `${count(Math.round(processed / seconds))} users/s`,
      });
      await sleep(delay);
      status = await readStatus(client, id);
    }
  } finally {
    progress.stop();
  }
  if (status.failed_at || !status.download_url) {
    throw new CliError(
      `export ${id} failed: ${errorMessage({ error: status.error }) ?? 'no file'}`,
      EXIT.someFailed,
    );
  }
  const file = await download(client, id, status.download_url, options.output);
  process.stderr.write(`export: ${count(file.bytes)} bytes written to ${options.output}\n`);
  const records = await countRecords(options.output, options.format);
  const differs = [
    status.file_bytes !== undefined && status.file_bytes !== file.bytes ? 'size' : undefined,
    status.file_sha256 !== undefined && status.file_sha256 !== file.sha256 ? 'SHA-256' : undefined,
    status.record_count !== undefined && status.record_count !== records ? 'records' : undefined,
  ].filter((d) => d !== undefined);
  if (differs.length > 0) {
    throw new CliError(
      `export ${id}: the file differs from what the service wrote (${differs.join(', ')}): ` +
        `${count(records)} records, ${count(file.bytes)} bytes, sha256 ${file.sha256}; ` +
        `expected ${count(status.record_count ?? 0)} records, ${count(status.file_bytes ?? 0)} bytes, ` +
        `sha256 ${status.file_sha256 ?? '?'}`,
      EXIT.someFailed,
    );
  }
  process.stderr.write(
    `export: ${count(records)} records, sha256 ${file.sha256}, as the service wrote them\n`,
  );
  if (!options.thenFollow) return EXIT.ok;
  if (!status.changes_cursor) throw new CliError(`export ${id} names no changes_cursor to follow from`);
  process.stderr.write(
    `export: following the changes after its snapshot (cursor ${status.changes_cursor})\n`,
  );
  return options.thenFollow(status.changes_cursor);
}

/** The records of a downloaded file: its lines (ndjson), or its rows after the header (csv). */
async function countRecords(path: string, format: 'csv' | 'ndjson'): Promise<number> {
  let records = 0;
  if (format === 'csv') {
    await pipeline(createReadStream(path), parseCsv(), async (rows: AsyncIterable<unknown>) => {
      for await (const _ of rows) records++;
    });
    return Math.max(records - 1, 0);
  }
  for await (const chunk of createReadStream(path)) {
    for (const byte of chunk as Buffer) if (byte === 0x0a) records++;
  }
  return records;
}

async function readStatus(client: ServiceClient, id: string): Promise<ExportStatus> {
  const answer = await client.call<ExportStatus>('GET', `${ROUTE}/${id}`);
  if (answer.status !== 200) {
    throw new CliError(
      `cannot read export ${id} (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
    );
  }
  return answer.body;
}

async function download(
  client: ServiceClient,
  id: string,
  firstUrl: string,
  output: string,
): Promise<{ bytes: number; sha256: string }> {
  const partial = `${output}.part`;
  let url = firstUrl;
  for (let attempt = 1; ; attempt++) {
    const res = await client.download(url);
    if (res.statusCode === 200) {
      const expected = Number(res.headers['content-length']);
      const file = await privateFile(partial);
      const hash = createHash('sha256');
      const digesting = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(res.body, digesting, file);
      if (Number.isFinite(expected) && file.bytesWritten !== expected) {
        await rm(partial, { force: true });
        if (attempt >= DOWNLOAD_ATTEMPTS)
          throw new CliError(`download of ${id} ended short: ${file.bytesWritten} of ${expected} bytes`);
      } else {
        await rename(partial, output);
        return { bytes: file.bytesWritten, sha256: hash.digest('hex') };
      }
    } else {
      await res.body.dump();
      if (attempt >= DOWNLOAD_ATTEMPTS) throw new CliError(`download of ${id} refused (${res.statusCode})`);
    }
    // An expired signed URL is refused: each status read signs a fresh one.
    const status = await readStatus(client, id);
    if (!status.download_url) throw new CliError(`export ${id} has no file any more`);
    url = status.download_url;
  }
}

/**
 * A new file only its owner can read (the export holds users' data, maybe their secrets), made
 * where `path` names nothing: a link planted there is removed, never followed.
 */
async function privateFile(path: string) {
  await rm(path, { force: true });
  // O_EXCL with O_CREAT fails on any existing name, a symbolic link included.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  return (await open(path, flags, 0o600)).createWriteStream();
}

/** `/email` or `/email:Email address` (a pointer holds no `:` of its own before its name). */
function fieldOf(spec: string): { pointer: string; field_name?: string } {
  const at = spec.indexOf(':');
  return at < 0 ? { pointer: spec } : { pointer: spec.slice(0, at), field_name: spec.slice(at + 1) };
}
