import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
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
  const random = randomPool.subarray(nextRandom, nextRandom + 16);
  nextRandom += 16;
  // The uuid package's own monotonic state, kept here because it draws its 16 random bytes from
  // the system one id at a time (a tenth of the import worker's CPU); given `random`, it keeps none.
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq =
      (((random[6] as number) & 0x7f) << 24) |
      ((random[7] as number) << 16) |
      ((random[8] as number) << 8) |
      (random[9] as number);
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  return uuidv7({ random, msecs: clock.msecs, seq: clock.seq });
}

const randomPool = new Uint8Array(16 * 256);
let nextRandom = randomPool.length;
const clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** The key of a verified claim in UserState.verified. */
export function claimKey(name: 'email' | 'phone_number', value: string): string {
  return `${name}\u0000${value}`;
}

export function cloneUserState(state: UserState): UserState {
  return structuredClone(state);
}
