import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BlobSASPermissions,
  BlobServiceClient,
  type ContainerClient,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from '@azure/storage-blob';
import type { BlobStorageConfig } from '../config.js';
import { classifyFault, EngineError, serviceUnavailable } from '../errors.js';

/** How often, and how far apart, a discarded blob is looked for again. */
const DISCARD_LOOKS = 4;
const DISCARD_LOOK_MS = 1_000;

/**
 * The size of a staged block. A block blob holds at most 50,000 blocks: a file may reach 390 GiB.
 * Fewer, larger requests cost the store less for each byte; a block's buffer is resident only as
 * far as it is filled, so a small file takes little memory.
 */
export const BLOCK_BYTES = 8 * 1024 * 1024;
export const MAX_BLOCKS = 50_000;
/** Blocks on their way to the store at once, per upload. */
const UPLOAD_CONCURRENCY = 2;

/** Refuses a file of more blocks than one blob holds, before Azure refuses its block list. */
export function assertFileFits(blocks: number): void {
  if (blocks > MAX_BLOCKS) throw tooLarge(blocks);
}

function tooLarge(blocks: number): EngineError {
  return new EngineError(
    'ExportFileTooLarge',
    `the file needs ${blocks} blocks; one blob holds ${MAX_BLOCKS} blocks (390 GiB in blocks of ${BLOCK_BYTES / 1024 / 1024} MiB)`,
  );
}

/** How many times a read whose connection broke midway is taken up again from where it broke. */
const READ_RETRIES = 20;

/**
 * Each request is retried a few times, quickly, for a blip; a longer outage fails the upload and the
 * task runner starts the export again with its own, longer backoff (TASK_RETRY_SECONDS).
 */
const CLIENT_OPTIONS = {
  retryOptions: { maxTries: 4, retryDelayInMs: 500, maxRetryDelayInMs: 4000, tryTimeoutInMs: 60_000 },
} as const;

/** How a stored file is served to whoever holds its signed URL. */
export interface BlobHeaders {
  readonly contentType: string;
  readonly contentDisposition: string;
}

/**
 * The service's container in Azure Blob Storage (or Azurite): streamed uploads, signed URLs of one
 * blob (read-only for a download, create-and-write for an import's upload), snapshots, ranged
 * reads, deletion. Nothing here touches the local disk.
 */
export class BlobStorage {
  private containerReady: Promise<unknown> | undefined;

  private constructor(
    private readonly container: ContainerClient,
    private readonly credential: StorageSharedKeyCredential,
  ) {}

  /** Creates the (private) container once; a failed attempt is tried again by the next caller. */
  private ensureContainer(): Promise<unknown> {
    this.containerReady ??= this.container.createIfNotExists().catch((err: unknown) => {
      this.containerReady = undefined;
      throw err;
    });
    return this.containerReady;
  }

  /**
   * Connects and makes sure the container exists. A storage that is down at start does not stop
   * the service (the first upload makes the container then); a refusal, such as a wrong key, does.
   */
  static async open(config: BlobStorageConfig, containerName: string): Promise<BlobStorage> {
    const service =
      'connectionString' in config
        ? BlobServiceClient.fromConnectionString(config.connectionString, CLIENT_OPTIONS)
        : new BlobServiceClient(
            `https://${config.accountName}.blob.core.windows.net`,
            new StorageSharedKeyCredential(config.accountName, config.accountKey),
            CLIENT_OPTIONS,
          );
    if (!(service.credential instanceof StorageSharedKeyCredential)) {
      throw new EngineError(
        'BlobSigningKeyMissing',
        'blob storage needs an account key to sign download URLs',
      );
    }
    const storage = new BlobStorage(service.getContainerClient(containerName), service.credential);
    await storage.ensureContainer().catch((err: unknown) => {
      if (classifyFault(err).kind !== 'transient') throw err;
    });
    return storage;
  }

  /** Resolves when the storage answers (it makes the container if it is not there yet). */
  async check(): Promise<void> {
    await this.ensureContainer();
    await this.container.getProperties();
  }

  /**
   * Streams `source` into a block blob: blocks are staged as they fill and the blob appears only
   * when the block list is committed at the end, so an upload cut short leaves no partial file.
   */
  async upload(name: string, source: Readable, headers: BlobHeaders, signal?: AbortSignal): Promise<void> {
    await this.commitBlocks(name, await this.stageBlocks(name, source, 'file', signal), headers);
  }

  /**
   * Stages `source` as blocks of a block blob without committing them, and returns their ids in
   * order. Each id is `prefix` and the block's number, so that parts written by several workers
   * into one blob never share an id (Azure wants every id of a blob the same length: give
   * prefixes of one length). Nothing is visible until commitBlocks names the blocks. A stream
   * longer than one blob holds fails at the block past the limit.
   */
  async stageBlocks(name: string, source: Readable, prefix: string, signal?: AbortSignal): Promise<string[]> {
    await this.ensureContainer();
    const blob = this.container.getBlockBlobClient(name);
    const ids: string[] = [];
    const inFlight = new Set<Promise<unknown>>();
    // Each chunk is copied into its block as it comes, and a staged block's buffer is filled again:
    // a chunk kept until its block filled would outlive the young generation, and every such
    // buffer would wait for a full collection.
    const spare: Buffer[] = [];
    let failed: unknown;
    const stage = (block: Buffer, length: number) => {
      const id = Buffer.from(`${prefix}-${String(ids.length).padStart(8, '0')}`).toString('base64');
      ids.push(id);
      const staged = blob
        .stageBlock(id, block.subarray(0, length), length, signal ? { abortSignal: signal } : {})
        .catch((err: unknown) => {
          failed ??= err;
        })
        .finally(() => {
          inFlight.delete(staged);
          spare.push(block);
        });
      inFlight.add(staged);
    };
    const nextBlock = () => spare.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES);
    // A failure stops the source with itself, so that whoever produces it learns why, rather than
    // of an abort by the loop's end.
    const stop = (err: unknown): never => {
      source.destroy(err instanceof Error ? err : new Error(String(err)));
      throw err;
    };
    let block = nextBlock();
    let filled = 0;
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk; // a stream of text
      while (data.length > 0) {
        const copied = data.copy(block, filled);
        filled += copied;
        data = data.subarray(copied);
        if (filled < block.length) continue;
        if (ids.length + 1 > MAX_BLOCKS) stop(tooLarge(ids.length + 1));
        if (inFlight.size >= UPLOAD_CONCURRENCY) await Promise.race(inFlight);
        if (failed !== undefined) stop(failed);
        stage(block, filled);
        block = nextBlock();
        filled = 0;
      }
    }
    if (filled > 0) stage(block, filled);
    await Promise.all(inFlight);
    if (failed !== undefined) throw failed;
    return ids;
  }

  /** Commits blocks staged by stageBlocks, in the order given, as the blob's whole content. */
  async commitBlocks(name: string, ids: readonly string[], headers: BlobHeaders): Promise<void> {
    assertFileFits(ids.length);
    await this.container.getBlockBlobClient(name).commitBlockList([...ids], {
      blobHTTPHeaders: {
        blobContentType: headers.contentType,
        blobContentDisposition: headers.contentDisposition,
      },
    });
  }

  /**
   * Discards the blocks an upload cut short had staged: committing an empty block list drops every
   * uncommitted block at once, and the empty blob it leaves is deleted. A block whose request was
   * already on its way when the upload was cut can still land afterwards, so the blob is looked
   * for again a little later, a few times, until it stays gone.
   */
  async discard(name: string): Promise<void> {
    const blob = this.container.getBlockBlobClient(name);
    for (let look = 0; look < DISCARD_LOOKS; look++) {
      if (look > 0) {
        await sleep(DISCARD_LOOK_MS);
        if ((await this.list(name, { uncommitted: true })).length === 0) return;
      }
      await blob.commitBlockList([]);
      await blob.deleteIfExists();
    }
  }

  /** A URL that can read this one blob, and nothing else, for `seconds` from now. */
  readUrl(name: string, seconds: number): string {
    return this.signedUrl(name, 'r', seconds);
  }

  /**
   * A URL through which a client may create this one blob and write it, in blocks or at once, and
   * nothing else (no read, no list, no delete), for `seconds` from now.
   */
  writeUrl(name: string, seconds: number): string {
    return this.signedUrl(name, 'cw', seconds);
  }

  /** A URL of this one blob signed for `permissions` (SAS letters) for `seconds` from now. */
  private signedUrl(name: string, permissions: string, seconds: number): string {
    const blob = this.container.getBlobClient(name);
    const sas = generateBlobSASQueryParameters(
      {
        containerName: this.container.containerName,
        blobName: name,
        permissions: BlobSASPermissions.parse(permissions),
        expiresOn: new Date(Date.now() + seconds * 1000),
      },
      this.credential,
    );
    return `${blob.url}?${sas.toString()}`;
  }

  /**
   * Takes a read-only snapshot of the blob as it is now, and its size; undefined when there is no
   * such blob (nothing committed yet). A later write to the blob leaves the snapshot as it was.
   */
  async snapshot(name: string): Promise<{ snapshot: string; bytes: number } | undefined> {
    const blob = this.container.getBlobClient(name);
    try {
      const { snapshot } = await blob.createSnapshot();
      if (!snapshot) throw serviceUnavailable('blob storage');
      const properties = await blob.withSnapshot(snapshot).getProperties();
      return { snapshot, bytes: properties.contentLength ?? 0 };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  }

  /**
   * The blob's content, as a stream: `count` bytes (else all) from byte `offset` on (a ranged
   * read), of one snapshot of it when named. A connection broken midway is read on from where it broke.
   */
  async read(
    name: string,
    signal?: AbortSignal,
    { offset = 0, count, snapshot }: { offset?: number; count?: number; snapshot?: string } = {},
  ): Promise<Readable> {
    const blob = this.container.getBlobClient(name);
    const { readableStreamBody } = await (snapshot ? blob.withSnapshot(snapshot) : blob).download(
      offset,
      count,
      { maxRetryRequests: READ_RETRIES, ...(signal ? { abortSignal: signal } : {}) },
    );
    if (!readableStreamBody) throw serviceUnavailable('blob storage');
    return readableStreamBody as Readable;
  }

  /** Stages one block of a block blob, not yet part of its content (commitBlocks makes it so). */
  async stageBlock(name: string, id: string, block: Buffer, signal?: AbortSignal): Promise<void> {
    await this.ensureContainer();
    await this.container
      .getBlockBlobClient(name)
      .stageBlock(id, block, block.length, signal ? { abortSignal: signal } : {});
  }

  /** Sets the blob's metadata (name-value pairs), in place of what it had. */
  async setMetadata(name: string, metadata: Record<string, string>): Promise<void> {
    await this.container.getBlobClient(name).setMetadata(metadata);
  }

  /** Deletes the blob, with any snapshot of it, if it exists. */
  async delete(name: string): Promise<void> {
    await this.container.getBlobClient(name).deleteIfExists({ deleteSnapshots: 'include' });
  }

  /**
   * One page of the container's listing (from `continuation`, the start when undefined): the
   * names of its blobs created before `cutoff`, and the continuation of the next page (undefined
   * after the last).
   */
  async listPageCreatedBefore(
    cutoff: Date,
    { continuation, pageSize }: { readonly continuation?: string | undefined; readonly pageSize: number },
  ): Promise<{ names: string[]; next: string | undefined }> {
    const pages = this.container
      .listBlobsFlat()
      .byPage({ maxPageSize: pageSize, ...(continuation ? { continuationToken: continuation } : {}) });
    const { value: page } = await pages.next();
    const names: string[] = [];
    for (const blob of page?.segment.blobItems ?? []) {
      const created = blob.properties.createdOn ?? blob.properties.lastModified;
      if (created < cutoff) names.push(blob.name);
    }
    return { names, next: page?.continuationToken || undefined };
  }

  /**
   * Names of the blobs whose name starts with `prefix`: committed ones, and with `uncommitted` also
   * those that have only staged blocks (an upload cut short and not yet discarded).
   */
  async list(prefix = '', { uncommitted = false } = {}): Promise<string[]> {
    const names: string[] = [];
    for await (const blob of this.container.listBlobsFlat({ prefix, includeUncommitedBlobs: uncommitted })) {
      names.push(blob.name);
    }
    return names;
  }
}
