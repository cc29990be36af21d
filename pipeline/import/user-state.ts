import { randomFillSync } from 'node:crypto';
import type { LoginIdKey } from '../config.js';
import type { OAuthIdentity } from './identity-members.js';

/** A login id of a user: its identity row id, normalized value and value as submitted. */
export interface LoginIdState {
  readonly id: string;
  readonly value: string;
  readonly original: string;
}

/** An OOB OTP authenticator (second factor by email or phone). */
export interface OobState {
  readonly id: string;
  readonly value: string;
}

/** An OAuth connection of a user: its identity row id and what the record said of it. */
export interface OAuthState extends OAuthIdentity {
  readonly id: string;
}

/**
 * Everything an import can change about one user, as loaded (or as created by an earlier record
 * of the same batch). The planner edits copies; the writer stores the difference.
 */
export interface UserState {
  readonly id: string;
  standard: Record<string, unknown>;
  custom: Record<string, unknown>;
  disabled: boolean;
  loginIds: Map<LoginIdKey, LoginIdState>;
  /** OAuth connections by `oauthKey(alias, subject)`, in the order they were given. */
  oauth: Map<string, OAuthState>;
  /** Verified claims as `name\u0000value`. */
  verified: Set<string>;
  mfaEmail: OobState | undefined;
  mfaPhone: OobState | undefined;
  roles: Set<string>;
  groups: Set<string>;
  /** The period the account may be used in (UTC, RFC 3339); null: open on that side. */
  validFrom: string | null;
  validUntil: string | null;
  /**
   * Secrets set only when the user is created (decisions 3.2: IGNORED on update), with the time
   * after which the password must be changed.
   */
  secrets: {
    password?: string;
    passwordExpireAfter?: string;
    mfaPassword?: string;
    totpSecrets: readonly string[];
  };
}

/**
 * The id of a row an import makes: UUIDv7, increasing in the order they are made, so that rows
 * made in one transaction (one created_at) keep the record's order in (created_at, id) and an
 * export of imported users lists their identities and factors in the order they were given.
 */
export function newRowId(): string {
  if (nextRandom === randomPool.length) {
    randomFillSync(randomPool);
    nextRandom = 0;
  }
  const random = nextRandom;
  nextRandom += 16;
  // The uuid package's monotonic state, kept here because its v7 draws its 16 random bytes from
  // the system one id at a time; the random bytes come from a pool filled 256 ids at a time.
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq =
      (((randomPool[random + 6] as number) & 0x7f) << 24) |
      ((randomPool[random + 7] as number) << 16) |
      ((randomPool[random + 8] as number) << 8) |
      (randomPool[random + 9] as number);
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  return v7Text(clock.msecs, clock.seq, randomPool, random);
}

const randomPool = new Uint8Array(16 * 256);
let nextRandom = randomPool.length;
const clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * The text of the UUIDv7 of `msecs` and `seq` with the random bytes at `random[offset…]`: the
 * uuid package's layout (its `v7({ random, msecs, seq })`), with its hex digits written in place
 * so that an id makes one string (an import makes several ids per user, and the package's
 * stringify joins twenty pieces for each).
 */
export function v7Text(msecs: number, seq: number, random: Uint8Array, offset: number): string {
  hexAt(0, (msecs / 0x10000000000) & 0xff);
  hexAt(1, (msecs / 0x100000000) & 0xff);
  hexAt(2, (msecs / 0x1000000) & 0xff);
  hexAt(3, (msecs / 0x10000) & 0xff);
  hexAt(4, (msecs / 0x100) & 0xff);
  hexAt(5, msecs & 0xff);
  hexAt(6, 0x70 | ((seq >>> 28) & 0x0f));
  hexAt(7, (seq >>> 20) & 0xff);
  hexAt(8, 0x80 | ((seq >>> 14) & 0x3f));
  hexAt(9, (seq >>> 6) & 0xff);
  hexAt(10, ((seq << 2) & 0xff) | ((random[offset + 10] as number) & 0x03));
  for (let n = 11; n < 16; n++) hexAt(n, random[offset + n] as number);
  return idText.toString('latin1');
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** The id being written: its dashes stay, its digits are overwritten. */
const idText = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');
/** Where the two hex digits of each of the 16 bytes stand in the text. */
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

function hexAt(byte: number, value: number): void {
  const at = DIGITS_AT[byte] as number;
  idText[at] = HEX_DIGITS[value >> 4] as number;
  idText[at + 1] = HEX_DIGITS[value & 0x0f] as number;
}

/** The key of a verified claim in UserState.verified. */
export function claimKey(name: 'email' | 'phone_number', value: string): string {
  return `${name}\u0000${value}`;
}

export function cloneUserState(state: UserState): UserState {
  return structuredClone(state);
}
