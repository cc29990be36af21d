import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * What proves a task's file whole (an export file, an import's results file): its size and
 * SHA-256, given by the task's status, so that a client can check its download.
 */
export interface FileDigest {
  readonly bytes: number;
  /** Hex. */
  readonly sha256: string;
}

/**
 * A pass-through stage of a file's bytes that digests them as they flow, and tells `moved` of each
 * chunk: the bytes reaching their sink are a task's sign of progress.
 */
export class DigestingStream extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;

  constructor(private readonly moved: () => void = () => {}) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.moved();
    done(null, chunk);
  }

  /** The digest of every byte that passed; call it once the stream ended. */
  digest(): FileDigest {
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}

/** The digest of a whole file read from `source` (a split export's, read back once committed). */
export async function digestOf(source: Readable, moved?: () => void): Promise<FileDigest> {
  const digesting = new DigestingStream(moved);
  digesting.resume();
  await pipeline(source, digesting);
  return digesting.digest();
}

/** What a file written through digestInto gives: the sink's answer, and the digest of its bytes. */
export interface DigestedFile<T> {
  readonly value: T;
  readonly digest: FileDigest;
}

/**
 * Streams a file produced by `stages` (the last gives bytes) into `sink`, digesting its bytes on
 * the way. Both sides settle before it returns: a block still being staged when the other side
 * failed would otherwise land after the caller discarded the blocks, and stay.
 */
export async function digestInto<T>(
  stages: readonly (NodeJS.ReadableStream | NodeJS.ReadWriteStream)[],
  sink: (file: Readable) => Promise<T>,
  signal: AbortSignal,
  moved?: () => void,
): Promise<DigestedFile<T>> {
  const file = new DigestingStream(moved);
  const [produced, written] = await Promise.allSettled([
    pipeline([...stages, file], { signal }),
    sink(file).catch((err: unknown) => {
      file.destroy(err instanceof Error ? err : new Error(String(err))); // stops the producer too
      throw err;
    }),
  ]);
  if (produced.status === 'rejected') throw produced.reason;
  if (written.status === 'rejected') throw written.reason;
  return { value: written.value, digest: file.digest() };
}
