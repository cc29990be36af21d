import { randomBytes } from 'node:crypto';
import type { ExportFormat } from '../../schemas/index.js';
import type { BlobHeaders } from './blob-storage.js';

const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
};

/** How the file is compressed: gzip, or not at all. */
export type FileCompression = 'gzip' | undefined;

/**
 * `<project>-<task_id>-<YYYYMMDDhhmmss>Z.<csv|ndjson>` (docs/decisions.md), stamped with `at` in UTC;
 * `.gz` after it when gzip-compressed.
 */
export function taskFileName(
  projectId: string,
  taskId: string,
  format: ExportFormat,
  at: Date,
  compression?: FileCompression,
): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${projectId}-${taskId}-${stamp}Z.${format}${compression === 'gzip' ? '.gz' : ''}`;
}

/**
 * The name of the blob one task attempt writes (an export's file, an import's results file): the file's name with a tag of the
 * attempt before its extension, under the project's folder. Attempts at one task never share a blob (two in the same second
 * would have shared the file's name), so one attempt discarding its blocks, or committing its
 * list, never touches another's; the file keeps its name as the download's (Content-Disposition).
 */
export function attemptBlobName(projectId: string, fileName: string): string {
  const dot = fileName.replace(/\.gz$/, '').lastIndexOf('.');
  return `${projectPrefix(projectId)}${fileName.slice(0, dot)}.${randomBytes(4).toString('hex')}${fileName.slice(dot)}`;
}

/**
 * The folder of a project's blobs (`<project>/`): every blob a task writes is under its project's,
 * so that a container shared with other projects or deployments is swept only where this one writes.
 */
export function projectPrefix(projectId: string): string {
  return `${projectId}/`;
}

/** The file's name (the download's) and the blob one attempt writes it to. */
export interface TaskFileNames {
  readonly fileName: string;
  readonly blobName: string;
}

/** How the file is served through its signed URL: its content type, and as an attachment. */
export function taskFileHeaders(
  fileName: string,
  format: ExportFormat,
  compression?: FileCompression,
): BlobHeaders {
  return {
    contentType: compression === 'gzip' ? 'application/gzip' : CONTENT_TYPES[format],
    contentDisposition: `attachment; filename="${fileName}"`,
  };
}

/** The blob a client uploads a file for an import to: `<project>/uploads/<upload id>`. */
export function uploadBlobName(projectId: string, uploadId: string): string {
  return `${projectPrefix(projectId)}uploads/${uploadId}`;
}

/**
 * The id of block `n` of an upload written in blocks through the service (the console) or by
 * `userctl`: one length for every block, as the store wants.
 */
export function uploadBlockId(n: number): string {
  return Buffer.from(`block-${String(n).padStart(8, '0')}`).toString('base64');
}

/** The sealed copy of the file an import task took in: `<project>/imports/<task id>.sealed`. */
export function sealedFileName(projectId: string, taskId: string): string {
  return `${projectPrefix(projectId)}imports/${taskId}.sealed`;
}
