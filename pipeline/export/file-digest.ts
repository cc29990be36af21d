import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * What proves an export file whole: its size and SHA-256, given by the task's status and kept in
 * the blob's metadata, and its number of records, so that a client can check its download.
 */
export interface FileDigest {
  readonly bytes: number;
  /** Hex. */
  readonly sha256: string;
}

/** A pass-through stage of a file's bytes that digests them as they flow. */
export class DigestingStream extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }

  /** The digest of every byte that passed; call it once the stream ended. */
  digest(): FileDigest {
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}

/** The digest of a whole file read from `source` (a split export's, read back once committed). */
export async function digestOf(source: Readable): Promise<FileDigest> {
  const digesting = new DigestingStream();
  digesting.resume();
  await pipeline(source, digesting);
  return digesting.digest();
}
