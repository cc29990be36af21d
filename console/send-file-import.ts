import { call, type Task } from './admin-api.js';
import { follow } from './follow-task.js';
import { allDetails, type Outcome, outcomeOf } from './send-import.js';

/** The file is written to its upload in blocks of this size (the service's largest), this many at once. */
const BLOCK_BYTES = 8 * 1024 * 1024;
const BLOCKS_IN_FLIGHT = 3;

/** How far a file import has come: its upload, then the service taking it in, then applying it. */
export interface FileImportProgress {
  readonly phase: 'uploading' | 'taking in' | 'applying';
  readonly done: number;
  readonly total: number;
}

/**
 * Imports a file too large to hold in the tab as one task of the service (docs/file-imports.md):
 * asks for an upload, writes the file to it in blocks through the service (a page may reach its own
 * origin only), commits them, starts the import naming it, follows it, and returns each record's
 * outcome (a record's position is its index in the file).
 */
export async function sendFileImport(
  file: File,
  request: Record<string, unknown>,
  listen: { onTask: (id: string) => void; onProgress: (progress: FileImportProgress) => void },
): Promise<Outcome[]> {
  const upload = await call<{ upload_id: string }>('POST', '/_api/admin/users/import/uploads');
  const base = `/_api/admin/users/import/uploads/${upload.upload_id}`;
  const blocks = Math.max(Math.ceil(file.size / BLOCK_BYTES), 1);
  let next = 0;
  let written = 0;
  await Promise.all(
    Array.from({ length: Math.min(BLOCKS_IN_FLIGHT, blocks) }, async () => {
      for (let n = next++; n < blocks; n = next++) {
        const block = file.slice(n * BLOCK_BYTES, (n + 1) * BLOCK_BYTES);
        await call('PUT', `${base}/blocks/${n}`, block);
        written += block.size;
        listen.onProgress({ phase: 'uploading', done: written, total: file.size });
      }
    }),
  );
  await call('POST', `${base}/commit`, { blocks });
  const created = await call<Task>(
    'POST',
    '/_api/admin/users/import',
    { ...request, source: { upload_id: upload.upload_id } },
    { 'Idempotency-Key': `${crypto.randomUUID()}.file` },
  );
  listen.onTask(created.id);
  const task = await follow(`/_api/admin/users/import/${created.id}?details=false`, (read) => {
    const p = read.progress;
    if (!p) return;
    listen.onProgress(
      p.total === 0
        ? { phase: 'taking in', done: p.bytes_read ?? 0, total: p.bytes_total ?? 0 }
        : { phase: 'applying', done: p.processed, total: p.total },
    );
  });
  if (task.error) throw new Error(`${task.error.reason}: ${task.error.message}`);
  return (await allDetails(task)).map((detail) => ({ ...outcomeOf(detail), position: detail.index }));
}
