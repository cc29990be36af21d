/**
 * The password hash formats an import accepts (`password.type`, `mfa.password.type`:
 * `passwordTypes` of the record schema). Each is checked strictly and stored as one string that
 * carries its parameters: bcrypt as it is, every other format as a PHC string
 * (https://github.com/P-H-C/phc-string-format) whose id names it.
 */
import { deserialize, type PhcOutput, serialize } from '@phc/format';
import type { PasswordType } from './index.js';

/** Formats kept only so that users can log in once and set a new password. */
export const LEGACY_PASSWORD_TYPES: ReadonlySet<PasswordType> = new Set(['md5_salted']);

export type { PasswordType };

/** A `password` (or `mfa.password`) member of an import record, after its JSON Schema. */
export interface PasswordInput {
  readonly type: PasswordType;
  readonly password_hash: string;
  /** firebase_scrypt (base64) and the salted digests. */
  readonly salt?: string;
  /** The salted digests: how `salt` is written (default utf8) and on which side it goes. */
  readonly salt_encoding?: 'utf8' | 'hex' | 'base64';
  readonly salt_position?: 'prefix' | 'suffix';
}

/** The project's Firebase scrypt parameters (Firebase console, "Password hash parameters"). */
export interface FirebaseScryptParams {
  /** base64 */
  readonly signerKey: string;
  /** base64 */
  readonly saltSeparator: string;
  readonly rounds: number;
  readonly memCost: number;
}

/**
 * `format`: the hash is not of its type; `maximum`: its parameters pass a bound of
 * `PASSWORD_COST_LIMITS`.
 */
export type StoredHashResult =
  | { ok: true; stored: string }
  | { ok: false; kind: 'format' | 'maximum'; problem: string };

/**
 * The highest cost a stored hash may ask of the login side, at or above what real systems use:
 * every verification of a hash costs what its parameters say, so a higher one would make each
 * login of that user a denial of service of the service that verifies it.
 */
export const PASSWORD_COST_LIMITS = {
  bcryptCost: 14,
  /** scrypt (128 * r * N bytes), Firebase's scrypt and argon2 (m KiB). */
  memoryBytes: 256 * 1024 * 1024,
  argon2Passes: 10,
  /** argon2 lanes and scrypt's p. */
  parallelism: 16,
  pbkdf2Rounds: 2_000_000,
} as const;

/**
 * The PHC id each format is stored under (bcrypt keeps its own `$2b$` string): the type with `-`
 * for `_`, the rule by which the export's records statement names the type of a stored hash.
 */
export const PHC_IDS = {
  argon2id: 'argon2id',
  argon2i: 'argon2i',
  scrypt: 'scrypt',
  firebase_scrypt: 'firebase-scrypt',
  pbkdf2_sha256: 'pbkdf2-sha256',
  pbkdf2_sha512: 'pbkdf2-sha512',
  sha256_salted: 'sha256-salted',
  sha512_salted: 'sha512-salted',
  md5_salted: 'md5-salted',
} as const satisfies Record<Exclude<PasswordType, 'bcrypt'>, string>;

const DIGEST_BYTES = { sha256_salted: 32, sha512_salted: 64, md5_salted: 16 } as const;

const EXPECTED: Record<PasswordType, string> = {
  bcrypt: '$2a$, $2b$ or $2y$, a cost of 04 to 31, then 53 characters of salt and hash',
  argon2id: 'the PHC string $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>',
  argon2i: 'the PHC string $argon2i$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>',
  scrypt: 'the PHC string $scrypt$ln=<log2 N>,r=<block size>,p=<parallelism>$<salt>$<hash>',
  firebase_scrypt:
    'a base64 password_hash and base64 salt (with the project firebase_scrypt parameters), or $firebase-scrypt$... as exported',
  pbkdf2_sha256:
    '$pbkdf2-sha256$i=<rounds>$<salt>$<hash> (PHC), pbkdf2_sha256$<rounds>$<salt>$<hash> (Django) or $pbkdf2-sha256$<rounds>$<salt>$<hash> (passlib)',
  pbkdf2_sha512:
    '$pbkdf2-sha512$i=<rounds>$<salt>$<hash> (PHC), pbkdf2_sha512$<rounds>$<salt>$<hash> (Django) or $pbkdf2-sha512$<rounds>$<salt>$<hash> (passlib)',
  sha256_salted:
    'a SHA-256 digest of 64 hex or 44 base64 characters, a salt and salt_position (prefix or suffix)',
  sha512_salted:
    'a SHA-512 digest of 128 hex or 88 base64 characters, a salt and salt_position (prefix or suffix)',
  md5_salted:
    'an MD5 digest of 32 hex or 24 base64 characters, a salt and salt_position (prefix or suffix); a legacy format',
};

const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/**
 * Which bound of `PASSWORD_COST_LIMITS` a stored hash passes, said as a sentence; undefined when
 * it passes none (or is of no known format).
 */
export function passwordCostProblem(stored: string): string | undefined {
  const limits = PASSWORD_COST_LIMITS;
  const type = passwordTypeOf(stored);
  if (type === undefined || type in DIGEST_BYTES) return undefined;
  const over = (what: string, value: number, limit: number) =>
    value > limit ? `${what} ${value} is above the limit of ${limit}` : undefined;
  const memory = (bytes: number) => over('memory (bytes)', bytes, limits.memoryBytes);
  if (type === 'bcrypt') return over('cost', Number(stored.slice(4, 6)), limits.bcryptCost);
  const phc = deserialize(stored);
  const n = (name: string) => Number(phc.params?.[name]);
  switch (type) {
    case 'argon2id':
    case 'argon2i':
      return (
        memory(n('m') * 1024) ??
        over('passes (t)', n('t'), limits.argon2Passes) ??
        over('lanes (p)', n('p'), limits.parallelism)
      );
    case 'scrypt':
      return memory(128 * n('r') * 2 ** n('ln')) ?? over('parallelism (p)', n('p'), limits.parallelism);
    case 'firebase_scrypt':
      return memory(128 * n('r') * 2 ** n('m'));
    default:
      return over('rounds', n('i'), limits.pbkdf2Rounds);
  }
}
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Checks a record's password member and gives the string to store, or a problem that names the
 * format expected. Parsing only: nothing is hashed here.
 */
export function storedPasswordHash(
  input: PasswordInput,
  firebase: FirebaseScryptParams | undefined,
): StoredHashResult {
  const fail = (detail?: string): StoredHashResult => ({
    ok: false,
    kind: 'format',
    problem: `not a valid ${input.type} hash${detail ? ` (${detail})` : ''}: expected ${EXPECTED[input.type]}`,
  });
  const result = parsedPasswordHash(input, firebase, fail);
  const above = result.ok ? passwordCostProblem(result.stored) : undefined;
  return above ? { ok: false, kind: 'maximum', problem: `${input.type} hash: ${above}` } : result;
}

function parsedPasswordHash(
  input: PasswordInput,
  firebase: FirebaseScryptParams | undefined,
  fail: (detail?: string) => StoredHashResult,
): StoredHashResult {
  const stray = strayMembers(input);
  if (stray) return fail(stray);
  const hash = input.password_hash;
  try {
    switch (input.type) {
      case 'bcrypt':
        return BCRYPT.test(hash) ? { ok: true, stored: hash } : fail();
      case 'argon2id':
      case 'argon2i':
        return checkedPhc(hash, input.type, checkArgon2) ?? fail();
      case 'scrypt':
        return checkedPhc(hash, 'scrypt', checkScrypt) ?? fail();
      case 'firebase_scrypt':
        return firebaseScrypt(input, firebase) ?? fail(firebaseProblem(input, firebase));
      case 'pbkdf2_sha256':
      case 'pbkdf2_sha512':
        return pbkdf2(hash, input.type) ?? fail();
      case 'sha256_salted':
      case 'sha512_salted':
      case 'md5_salted':
        return saltedDigest(input, input.type) ?? fail();
    }
  } catch {
    return fail();
  }
}

/** The format a stored hash is in. */
export function passwordTypeOf(stored: string): PasswordType | undefined {
  if (BCRYPT.test(stored)) return 'bcrypt';
  const id = /^\$([a-z0-9-]{1,32})\$/.exec(stored)?.[1];
  return (Object.keys(PHC_IDS) as (keyof typeof PHC_IDS)[]).find((type) => PHC_IDS[type] === id);
}

function strayMembers(input: PasswordInput): string | undefined {
  const salted = input.type in DIGEST_BYTES;
  if (!salted && input.type !== 'firebase_scrypt' && input.salt !== undefined)
    return `salt is not a member of ${input.type} passwords: the hash carries it`;
  if (!salted && (input.salt_encoding !== undefined || input.salt_position !== undefined))
    return `salt_encoding and salt_position belong to the salted digests only`;
  return undefined;
}

type PhcCheck = (phc: PhcOutput) => boolean;

function checkedPhc(hash: string, type: keyof typeof PHC_IDS, check: PhcCheck): StoredHashResult | undefined {
  const phc = deserialize(hash);
  if (phc.id !== PHC_IDS[type] || !phc.salt || !phc.hash || !check(phc)) return undefined;
  return { ok: true, stored: serialize(phc) };
}

function intParam(phc: PhcOutput, name: string, min: number, max: number): boolean {
  const value = phc.params?.[name];
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function onlyParams(phc: PhcOutput, names: readonly string[]): boolean {
  const given = Object.keys(phc.params ?? {});
  return given.length === names.length && names.every((n) => given.includes(n));
}

// Upper bounds keep a hostile hash from costing the login side more than a real one would.
const checkArgon2: PhcCheck = (phc) =>
  (phc.version === 19 || phc.version === 16) &&
  onlyParams(phc, ['m', 't', 'p']) &&
  intParam(phc, 'p', 1, 255) &&
  intParam(phc, 'm', 8 * Number(phc.params?.p), 4_194_304) &&
  intParam(phc, 't', 1, 64) &&
  (phc.salt?.length ?? 0) >= 8 &&
  (phc.hash?.length ?? 0) >= 4;

const checkScrypt: PhcCheck = (phc) =>
  phc.version === undefined &&
  onlyParams(phc, ['ln', 'r', 'p']) &&
  intParam(phc, 'ln', 1, 24) &&
  intParam(phc, 'r', 1, 64) &&
  intParam(phc, 'p', 1, 64) &&
  (phc.hash?.length ?? 0) >= 16;

const checkFirebase: PhcCheck = (phc) =>
  phc.version === undefined &&
  onlyParams(phc, ['r', 'm', 'k', 's']) &&
  intParam(phc, 'r', 1, 64) &&
  intParam(phc, 'm', 1, 24) &&
  typeof phc.params?.k === 'string' &&
  typeof phc.params?.s === 'string' &&
  (phc.hash?.length ?? 0) > 0;

const checkPbkdf2: PhcCheck = (phc) =>
  phc.version === undefined &&
  onlyParams(phc, ['i']) &&
  intParam(phc, 'i', 1, 10_000_000) &&
  (phc.hash?.length ?? 0) >= 16;

function firebaseScrypt(
  input: PasswordInput,
  params: FirebaseScryptParams | undefined,
): StoredHashResult | undefined {
  if (input.password_hash.startsWith('$')) {
    return input.salt === undefined
      ? checkedPhc(input.password_hash, 'firebase_scrypt', checkFirebase)
      : undefined;
  }
  if (!params || input.salt === undefined) return undefined;
  if (!BASE64.test(input.password_hash) || !BASE64.test(input.salt) || input.password_hash === '')
    return undefined;
  const stored = serialize({
    id: PHC_IDS.firebase_scrypt,
    params: {
      r: params.rounds,
      m: params.memCost,
      k: Buffer.from(params.signerKey, 'base64'),
      s: Buffer.from(params.saltSeparator, 'base64'),
    },
    salt: Buffer.from(input.salt, 'base64'),
    hash: Buffer.from(input.password_hash, 'base64'),
  });
  return { ok: true, stored };
}

function firebaseProblem(input: PasswordInput, params: FirebaseScryptParams | undefined): string | undefined {
  if (input.password_hash.startsWith('$')) return undefined;
  if (!params)
    return 'the project has no firebase_scrypt parameters (project.password_hashes.firebase_scrypt)';
  if (input.salt === undefined) return 'salt is required';
  return undefined;
}

const PASSLIB_OR_DJANGO =
  /^(\$pbkdf2-(sha256|sha512)|pbkdf2_(sha256|sha512))\$([1-9][0-9]{0,7})\$([^$]+)\$([^$]+)$/;

/** PHC (`i=`), passlib (`$pbkdf2-sha256$rounds$ab64$ab64`) or Django (`pbkdf2_sha256$rounds$salt$base64`). */
function pbkdf2(hash: string, type: 'pbkdf2_sha256' | 'pbkdf2_sha512'): StoredHashResult | undefined {
  const digest = type.slice('pbkdf2_'.length);
  if (hash.startsWith(`$${PHC_IDS[type]}$i=`)) return checkedPhc(hash, type, checkPbkdf2);
  const match = PASSLIB_OR_DJANGO.exec(hash);
  if (!match || (match[2] ?? match[3]) !== digest) return undefined;
  const [, , passlibDigest, , rounds, salt = '', value = ''] = match;
  let saltBytes: Buffer;
  let hashBytes: Buffer;
  if (passlibDigest) {
    const [adaptedSalt, adaptedHash] = [adaptedBase64(salt), adaptedBase64(value)];
    if (!adaptedSalt || !adaptedHash) return undefined;
    saltBytes = adaptedSalt;
    hashBytes = adaptedHash;
  } else {
    if (!BASE64.test(value)) return undefined;
    saltBytes = Buffer.from(salt, 'utf8');
    hashBytes = Buffer.from(value, 'base64');
  }
  if (hashBytes.length < 16) return undefined;
  return {
    ok: true,
    stored: serialize({ id: PHC_IDS[type], params: { i: Number(rounds) }, salt: saltBytes, hash: hashBytes }),
  };
}

/** passlib's "ab64": base64 with `.` for `+` and no padding; undefined when `text` is not that. */
function adaptedBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9./]+$/.test(text) || text.length % 4 === 1) return undefined;
  return Buffer.from(text.replaceAll('.', '+'), 'base64');
}

function saltedDigest(input: PasswordInput, type: keyof typeof DIGEST_BYTES): StoredHashResult | undefined {
  if (input.password_hash.startsWith('$')) {
    if (input.salt !== undefined || input.salt_position !== undefined || input.salt_encoding !== undefined)
      return undefined;
    return checkedPhc(input.password_hash, type, (phc) => checkSalted(phc, type));
  }
  const { salt, salt_position: position, salt_encoding: encoding = 'utf8' } = input;
  if (salt === undefined || salt === '' || position === undefined) return undefined;
  const bytes = DIGEST_BYTES[type];
  const hash = input.password_hash;
  let digest: Buffer;
  if (hash.length === bytes * 2 && HEX.test(hash)) digest = Buffer.from(hash, 'hex');
  else if (hash.length === Math.ceil(bytes / 3) * 4 && BASE64.test(hash))
    digest = Buffer.from(hash, 'base64');
  else return undefined;
  if (encoding === 'hex' && !HEX.test(salt)) return undefined;
  if (encoding === 'base64' && !BASE64.test(salt)) return undefined;
  const saltBytes = Buffer.from(salt, encoding);
  return {
    ok: true,
    stored: serialize({ id: PHC_IDS[type], params: { pos: position }, salt: saltBytes, hash: digest }),
  };
}

function checkSalted(phc: PhcOutput, type: keyof typeof DIGEST_BYTES): boolean {
  return (
    phc.version === undefined &&
    onlyParams(phc, ['pos']) &&
    (phc.params?.pos === 'prefix' || phc.params?.pos === 'suffix') &&
    phc.hash?.length === DIGEST_BYTES[type]
  );
}
