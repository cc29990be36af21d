import type { ImportFileSource, ImportRequest } from '../../schemas/index.js';
import { newUploadId } from '../../schemas/task-id.js';
import type { BlobStorage } from '../blob/blob-storage.js';
import { uploadBlobName, uploadBlockId } from '../blob/task-files.js';
import type { ServiceConfig } from '../config.js';
import {
  countOpenUploads,
  findUpload,
  insertNamedFile,
  insertUpload,
  takeUpload,
} from '../db/import-files.js';
import type { Queryable } from '../db/pool.js';
import { ApiError } from '../errors.js';
import type { SecretBox } from '../tasks/task-secrets.js';
import type { ImportFileRequest } from './import-tasks.js';
import type { UrlFiles } from './url-source.js';

// The files imports read (docs/file-imports.md): uploads, made on request with a write-only URL,
// and files named by URL; each read by one import, which fixes how when it is accepted.

/** What POST /_api/admin/users/import/uploads answers. */
export interface NewUpload {
  readonly upload_id: string;
  readonly upload_url: string;
  readonly expires_at: string;
}

/** Seconds a client refused a new upload (too many open) is asked to wait. */
const OPEN_UPLOADS_RETRY_SECONDS = 60;

/** The first bytes of a gzip stream. */
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** A new upload of the project: its id, and a URL that can create and write its blob only. */
export async function newUpload(
  db: Queryable,
  blobs: BlobStorage,
  config: ServiceConfig,
): Promise<NewUpload> {
  const limit = config.importFiles.openUploadsLimit;
  const open = await countOpenUploads(db, config.project.id);
  if (open >= limit)
    throw new ApiError(
      'ImportUploadsOpen',
      'too many uploads are open: name them in imports, or let them expire',
      { open_uploads: open, limit },
      { headers: { 'Retry-After': String(OPEN_UPLOADS_RETRY_SECONDS) } },
    );
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

/** The file an accepted import will read: its upload's id (a URL's file gets one), and how. */
export interface NamedFile {
  readonly uploadId: string;
  readonly source: ImportFileSource;
  /** A file named by URL: it has no upload row yet. */
  readonly byUrl: boolean;
  /** What the import's message says of the file (its URL never: it is a credential). */
  readonly request: ImportFileRequest;
}

/**
 * How the import will read the file it names, fixed now: for an upload, a snapshot of it (the
 * upload's URL can still write, the import reads what was there when it was accepted); for a URL,
 * the URL sealed; the size within IMPORT_FILE_MAX_BYTES, the compression (named, or gzip found by
 * the file's first bytes).
 */
export async function namedFile(
  db: Queryable,
  blobs: BlobStorage,
  urls: UrlFiles,
  box: SecretBox,
  config: ServiceConfig,
  request: FileImportRequest,
): Promise<NamedFile> {
  const { url, upload_id } = request.source;
  let uploadId: string;
  let where: { bytes: number; head: () => Promise<Buffer> } & Partial<ImportFileSource>;
  if (url !== undefined) {
    const probe = await urls.probe(url, GZIP_MAGIC.length);
    uploadId = newUploadId();
    where = { bytes: probe.bytes, head: async () => probe.head, sealed_url: box.seal(url) };
  } else {
    uploadId = upload_id as string;
    const upload = await findUpload(db, config.project.id, uploadId);
    if (!upload) throw new ApiError('ImportUploadNotFound', 'no such upload');
    usable(upload);
    const taken = await blobs.snapshot(upload.upload_blob);
    if (!taken) throw new ApiError('ImportUploadEmpty', 'nothing was uploaded (no committed blob)');
    where = { ...taken, head: () => blobHead(blobs, upload.upload_blob, taken.snapshot) };
  }
  const limit = config.importFiles.maxBytes;
  if (where.bytes > limit) {
    throw new ApiError('ImportFileTooLarge', `the file is larger than ${limit} bytes`, {
      bytes: where.bytes,
      limit,
    });
  }
  const { head, ...found } = where;
  const compression =
    request.compression ??
    (where.bytes >= GZIP_MAGIC.length && GZIP_MAGIC.equals(await head()) ? 'gzip' : 'none');
  const { format, csv, from } = request;
  return {
    uploadId,
    byUrl: url !== undefined,
    source: {
      ...found,
      format,
      compression,
      ...(csv ? { columns: csv.columns } : {}),
      ...(from ? { from } : {}),
    },
    request: {
      source: { upload_id: uploadId },
      format,
      compression,
      ...(csv ? { csv } : {}),
      ...(from ? { from } : {}),
    },
  };
}

/**
 * Gives the file to the accepted import `taskId`, in its admission transaction; throws (rolling
 * the task back) when another import took the upload or it expired meanwhile.
 */
export async function giveFileTo(
  db: Queryable,
  config: ServiceConfig,
  file: NamedFile,
  taskId: string,
  sealedBlob: string,
): Promise<void> {
  const project = config.project.id;
  if (file.byUrl) {
    const blob = uploadBlobName(project, file.uploadId); // never written: the file stays at its URL
    await insertNamedFile(db, {
      project,
      uploadId: file.uploadId,
      blob,
      taskId,
      source: file.source,
      sealedBlob,
    });
    return;
  }
  if (await takeUpload(db, project, file.uploadId, taskId, file.source, sealedBlob)) return;
  const upload = await findUpload(db, project, file.uploadId);
  if (!upload) throw new ApiError('ImportUploadNotFound', 'no such upload');
  usable(upload);
  throw new ApiError('ImportUploadTaken', 'another import reads this upload');
}

/** The largest block of an upload written through the service (the console's). */
export const UPLOAD_BLOCK_BYTES = 8 * 1024 * 1024;
/** The most blocks an upload written through the service has (the store's limit of a blob). */
export const UPLOAD_BLOCKS = 50_000;

/**
 * Stages block `n` of an upload written through the service rather than through its URL (the
 * console's, whose page may reach only its own origin). The upload must still be open: this
 * project's, unexpired, named by no import.
 */
export async function stageUploadBlock(
  db: Queryable,
  blobs: BlobStorage,
  config: ServiceConfig,
  uploadId: string,
  n: number,
  block: Buffer,
): Promise<void> {
  const upload = await openUpload(db, config, uploadId);
  await blobs.stageBlock(upload.upload_blob, uploadBlockId(n), block);
}

/** Commits blocks 0..blocks-1 staged by stageUploadBlock as the upload's file. */
export async function commitUploadBlocks(
  db: Queryable,
  blobs: BlobStorage,
  config: ServiceConfig,
  uploadId: string,
  blocks: number,
): Promise<void> {
  const upload = await openUpload(db, config, uploadId);
  const ids = Array.from({ length: blocks }, (_, n) => uploadBlockId(n));
  await blobs
    .commitBlocks(upload.upload_blob, ids, {
      contentType: 'application/octet-stream',
      contentDisposition: 'attachment',
    })
    .catch((err: unknown) => {
      if ((err as { code?: string }).code === 'InvalidBlockList')
        throw new ApiError('ImportUploadBlocksMissing', `not every block from 0 to ${blocks - 1} was staged`);
      throw err;
    });
}

/** The project's upload that can still be written: unexpired and named by no import. */
async function openUpload(db: Queryable, config: ServiceConfig, uploadId: string) {
  const upload = await findUpload(db, config.project.id, uploadId);
  if (!upload) throw new ApiError('ImportUploadNotFound', 'no such upload');
  if (upload.task_id !== null)
    throw new ApiError('ImportUploadTaken', 'an import reads this upload: it is closed');
  usable(upload);
  return upload;
}

/** Throws when an upload can no longer be named by a new import. */
function usable(upload: { task_id: string | null; expires_at: Date }): void {
  if (upload.task_id !== null) return; // its import, asked again with its Idempotency-Key, or another's
  if (upload.expires_at.getTime() <= Date.now()) {
    throw new ApiError('ImportUploadExpired', 'the upload expired before an import named it');
  }
}

/** The first bytes of the snapshot of an upload. */
async function blobHead(blobs: BlobStorage, blob: string, snapshot: string): Promise<Buffer> {
  const head: Buffer[] = [];
  for await (const chunk of await blobs.read(blob, undefined, { snapshot, count: GZIP_MAGIC.length }))
    head.push(chunk as Buffer);
  return Buffer.concat(head).subarray(0, GZIP_MAGIC.length);
}
