import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceConfig } from '../config.js';
import { ConfigError, EngineError } from '../errors.js';

/**
 * Seals values with AES-256-GCM so that secrets never rest in plain text in a task row, a queue
 * row or a bus message (docs/decisions.md, Tasks). A sealed value names its key, so keys can rotate:
 * new values are sealed with the current key, and values sealed with a previous one still open.
 */
export interface SecretBox {
  /** `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url) of the value's JSON. */
  seal(value: unknown): string;
  /** The value a `seal` made; throws if it was not sealed by one of the keys. */
  open(sealed: string): unknown;
  /** Bytes sealed as bytes (a file's frame): a version byte, the key id, iv, ciphertext, tag. */
  sealBytes(plain: Buffer): Buffer;
  /** The bytes a `sealBytes` made; throws if they were not sealed by one of the keys. */
  openBytes(sealed: Buffer): Buffer;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The first byte of sealed bytes, and the length of the key id after it. */
const BYTES_VERSION = 1;
const KEY_ID_BYTES = 8;
const KEY_FILE = 'task-secrets.key';

/** The id of a key: the first 16 hex digits of its SHA-256, so nothing needs naming it. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** A box that seals with `current` and opens with it or any of `previous`. */
export function secretBox(current: Buffer, previous: readonly Buffer[] = []): SecretBox {
  for (const key of [current, ...previous]) {
    if (key.length !== KEY_BYTES)
      throw new ConfigError(`TASK_SECRETS_KEY must be ${KEY_BYTES} bytes, base64`);
  }
  const currentId = keyId(current);
  const keys = new Map([current, ...previous].map((k) => [keyId(k), k]));
  return {
    seal(value) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      const text = Buffer.concat([cipher.update(JSON.stringify(value) ?? 'null', 'utf8'), cipher.final()]);
      return ['v1', currentId, iv, text, cipher.getAuthTag()]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, id, iv, text, tag] = sealed.split('.');
      const key = id === undefined ? undefined : keys.get(id);
      if (version !== 'v1' || !key || iv === undefined || text === undefined || tag === undefined) {
        throw new EngineError('SealedSecretUnreadable', 'a sealed task secret has an unknown format or key');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plain = Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8'));
    },
    sealBytes(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      const text = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([
        Buffer.from([BYTES_VERSION]),
        Buffer.from(currentId, 'hex'),
        iv,
        text,
        cipher.getAuthTag(),
      ]);
    },
    openBytes(sealed) {
      const head = 1 + KEY_ID_BYTES + IV_BYTES;
      const key = keys.get(sealed.subarray(1, 1 + KEY_ID_BYTES).toString('hex'));
      if (sealed[0] !== BYTES_VERSION || !key || sealed.length < head + TAG_BYTES) {
        throw new EngineError('SealedSecretUnreadable', 'sealed bytes have an unknown format or key');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1 + KEY_ID_BYTES, head));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(head, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]);
    },
  };
}

/**
 * The service's box: TASK_SECRETS_KEY (and TASK_SECRETS_PREVIOUS_KEYS), else a key kept in the
 * data folder, made on first start as the development admin key is. Every process of one
 * deployment must use the same key: set TASK_SECRETS_KEY wherever they do not share a data folder.
 */
export async function openTaskSecrets(config: ServiceConfig): Promise<SecretBox> {
  if (config.taskSecrets.key) {
    return secretBox(
      Buffer.from(config.taskSecrets.key, 'base64'),
      config.taskSecrets.previousKeys.map((k) => Buffer.from(k, 'base64')),
    );
  }
  const file = path.join(config.dataDir, KEY_FILE);
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(file, randomBytes(KEY_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' }).catch(
    (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // made by an earlier start
    },
  );
  return secretBox(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'));
}
