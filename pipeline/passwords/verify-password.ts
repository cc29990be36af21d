import { createCipheriv, createHash, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { verify as verifyArgon2 } from '@node-rs/argon2';
import { deserialize, type PhcOutput } from '@phc/format';
import { compare as compareBcrypt } from 'bcrypt-ts';
import {
  LEGACY_PASSWORD_TYPES,
  type PasswordType,
  passwordCostProblem,
  passwordTypeOf,
} from '../../schemas/password-formats.js';

const scryptAsync = promisify(scrypt) as (
  password: string | Buffer,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;
const pbkdf2Async = promisify(pbkdf2);

/**
 * Whether `plain` is the password of a stored hash (as the import stores them: see
 * password-formats.ts), for the login side of the platform. A stored string of no known format,
 * or one whose parameters pass `PASSWORD_COST_LIMITS` (stored by other means than the import),
 * verifies nothing: it is refused before any work is spent on it.
 */
export async function verifyPassword(stored: string, plain: string): Promise<boolean> {
  const type = passwordTypeOf(stored);
  if (!type || passwordCostProblem(stored) !== undefined) return false;
  if (type === 'bcrypt') return compareBcrypt(plain, stored);
  if (type === 'argon2id' || type === 'argon2i') return verifyArgon2(stored, plain);
  const phc = deserialize(stored);
  const expected = phc.hash ?? Buffer.alloc(0);
  return sameBytes(await DERIVE[type](phc, plain, expected.length), expected);
}

/** Whether the stored hash is of a format kept only until the user sets a new password. */
export function isLegacyPassword(stored: string): boolean {
  const type = passwordTypeOf(stored);
  return type !== undefined && LEGACY_PASSWORD_TYPES.has(type);
}

type Derive = (phc: PhcOutput, plain: string, length: number) => Promise<Buffer>;

const num = (phc: PhcOutput, name: string) => Number(phc.params?.[name]);
const bytes = (phc: PhcOutput, name: string) => Buffer.from(String(phc.params?.[name] ?? ''), 'base64');
const salt = (phc: PhcOutput) => phc.salt ?? Buffer.alloc(0);

/** scrypt needs 128 * N * r bytes (and p blocks of 128 * r); Node refuses above maxmem. */
function scryptOptions(n: number, r: number, p: number) {
  return { N: n, r, p, maxmem: 128 * n * r + 128 * r * p + 1024 * 1024 };
}

const salted =
  (algorithm: 'sha256' | 'sha512' | 'md5'): Derive =>
  async (phc, plain) => {
    const password = Buffer.from(plain, 'utf8');
    const parts = phc.params?.pos === 'prefix' ? [salt(phc), password] : [password, salt(phc)];
    return createHash(algorithm).update(Buffer.concat(parts)).digest();
  };

const DERIVE: Record<Exclude<PasswordType, 'bcrypt' | 'argon2id' | 'argon2i'>, Derive> = {
  scrypt: (phc, plain, length) => {
    const n = 2 ** num(phc, 'ln');
    return scryptAsync(plain, salt(phc), length, scryptOptions(n, num(phc, 'r'), num(phc, 'p')));
  },
  // Firebase's variant: scrypt(password, salt + separator) keys AES-256-CTR (zero IV), which
  // encrypts the project's signer key; the result is the hash.
  firebase_scrypt: async (phc, plain) => {
    const n = 2 ** num(phc, 'm');
    const r = num(phc, 'r');
    const key = await scryptAsync(
      plain,
      Buffer.concat([salt(phc), bytes(phc, 's')]),
      32,
      scryptOptions(n, r, 1),
    );
    const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
    return Buffer.concat([cipher.update(bytes(phc, 'k')), cipher.final()]);
  },
  pbkdf2_sha256: (phc, plain, length) => pbkdf2Async(plain, salt(phc), num(phc, 'i'), length, 'sha256'),
  pbkdf2_sha512: (phc, plain, length) => pbkdf2Async(plain, salt(phc), num(phc, 'i'), length, 'sha512'),
  sha256_salted: salted('sha256'),
  sha512_salted: salted('sha512'),
  md5_salted: salted('md5'),
};

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
