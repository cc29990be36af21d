import type { ImportFileSource, ImportRequest } from '../../schemas/index.js';
import { newUploadId } from '../../schemas/task-id.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import { uploadBlobName } from '../blob/task-files.js';
import type { ServiceConfig } from '../config.js';
import { findUpload, insertUpload, takeUpload } from '../db/import-files.js';
import type { Queryable } from '../db/pool.js';
import { ApiError } from '../errors.js';

// Uploads of files to import (docs/file-imports.md): made on request with a write-only URL, then
// named by one import, which fixes how it reads the file when it is accepted.

/** What POST /_api/admin/users/import/uploads answers. */
export interface NewUpload {
  readonly upload_id: string;
  readonly upload_url: string;
  readonly expires_at: string;
}

/** The first bytes of a gzip stream. */
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** A new upload of the project: its id, and a URL that can create and write its blob only. */
export async function newUpload(
  db: Queryable,
  blobs: BlobStorage,
  config: ServiceConfig,
): Promise<NewUpload> {
  const uploadId = newUploadId();
  const blob = uploadBlobName(config.project.id, uploadId);
  const seconds = config.importFiles.uploadSeconds;
  const expiresAt = new Date(Date.now() + seconds * 1000);
  await insertUpload(db, { project: config.project.id, uploadId, blob, expiresAt });
  return {
    upload_id: uploadId,
    upload_url: blobs.writeUrl(blob, seconds),
    expires_at: expiresAt.toISOString(),
  };
}

/** A file import request: `source` and `format` present. */
export type FileImportRequest = ImportRequest & Required<Pick<ImportRequest, 'source' | 'format'>>;

/**
 * How the import reads the upload it names, fixed now: a snapshot of the file as uploaded (the
 * upload's URL can still write, the import reads what was there when it was accepted), its size
 * within IMPORT_FILE_MAX_BYTES, its compression (named, or gzip found by its first bytes).
 */
export async function uploadSource(
  db: Queryable,
  blobs: BlobStorage,
  config: ServiceConfig,
  request: FileImportRequest,
): Promise<ImportFileSource> {
  const upload = await findUpload(db, config.project.id, request.source.upload_id);
  if (!upload) throw new ApiError('ImportUploadNotFound', 'no such upload');
  usable(upload);
  const taken = await blobs.snapshot(upload.upload_blob);
  if (!taken) throw new ApiError('ImportUploadEmpty', 'nothing was uploaded (no committed blob)');
  const limit = config.importFiles.maxBytes;
  if (taken.bytes > limit) {
    throw new ApiError('ImportFileTooLarge', `the file is larger than ${limit} bytes`, {
      bytes: taken.bytes,
      limit,
    });
  }
  const compression = request.compression ?? (await sniffCompression(blobs, upload.upload_blob, taken));
  return {
    format: request.format,
    compression,
    ...(request.csv ? { columns: request.csv.columns } : {}),
    bytes: taken.bytes,
    snapshot: taken.snapshot,
  };
}

/**
 * Gives the upload to the accepted import `taskId`, in its admission transaction; throws (rolling
 * the task back) when another import took it or it expired meanwhile.
 */
export async function takeUploadFor(
  db: Queryable,
  project: string,
  uploadId: string,
  taskId: string,
  source: ImportFileSource,
  sealedBlob: string,
): Promise<void> {
  if (await takeUpload(db, project, uploadId, taskId, source, sealedBlob)) return;
  const upload = await findUpload(db, project, uploadId);
  if (!upload) throw new ApiError('ImportUploadNotFound', 'no such upload');
  usable(upload);
  throw new ApiError('ImportUploadTaken', 'another import reads this upload');
}

/** Throws when an upload can no longer be named by a new import. */
function usable(upload: { task_id: string | null; expires_at: Date }): void {
  if (upload.task_id !== null) return; // its import, asked again with its Idempotency-Key, or another's
  if (upload.expires_at.getTime() <= Date.now()) {
    throw new ApiError('ImportUploadExpired', 'the upload expired before an import named it');
  }
}

async function sniffCompression(
  blobs: BlobStorage,
  blob: string,
  taken: { snapshot: string; bytes: number },
): Promise<'gzip' | 'none'> {
  if (taken.bytes < GZIP_MAGIC.length) return 'none';
  const head: Buffer[] = [];
  for await (const chunk of await blobs.read(blob, undefined, {
    snapshot: taken.snapshot,
    count: GZIP_MAGIC.length,
  }))
    head.push(chunk as Buffer);
  return Buffer.concat(head).subarray(0, GZIP_MAGIC.length).equals(GZIP_MAGIC) ? 'gzip' : 'none';
}
