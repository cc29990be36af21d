import type { ImportIdentifier, ImportOutcome } from '../../schemas/index.js';
import type { LoginIdKey, ProjectConfig } from '../config.js';
import type { UserState } from './user-state.js';
import type { RecordValidator } from './validate-record.js';
import type { ImportWarning } from './warnings.js';

// What a batch of an import is: the options of its task, the state it reads, the plan it writes
// and the detail each record ends with.

/** The result of one record, as stored in import_details and shown by the status endpoint. */
export interface ImportDetail {
  readonly index: number;
  /** A record of an ndjson or CSV file: its line in the file. */
  readonly line?: number;
  readonly outcome: ImportOutcome;
  readonly user_id?: string;
  readonly record: unknown;
  readonly warnings?: ImportWarning[];
  readonly errors?: Record<string, unknown>[];
}

/** What the database holds that a batch's records refer to, loaded in one go. */
export interface BatchState {
  /** `key\u0000normalized value` -> owning user id, for every login id the batch mentions. */
  readonly owners: Map<string, string>;
  /** The users that own an identifier value of the batch. */
  readonly users: Map<string, UserState>;
  /** The ids among the batch's `sub` values that users have. */
  readonly takenIds: ReadonlySet<string>;
  /** Role key -> role id, for the role keys of the batch that exist. */
  readonly roleIds: ReadonlyMap<string, string>;
  /** Group key -> group id, for the group keys of the batch that exist. */
  readonly groupIds: ReadonlyMap<string, string>;
}

/** The users a batch creates or changes: their state before (undefined: new) and after. */
export interface BatchPlan {
  readonly details: ImportDetail[];
  readonly changed: Map<string, { before: UserState | undefined; after: UserState }>;
}

/** Options of one import task. */
export interface ImportOptions {
  readonly identifier: ImportIdentifier;
  readonly upsert: boolean;
  readonly project: ProjectConfig;
  readonly validate: RecordValidator;
  /** Append the changed users to the `user_changes` outbox (a search index is fed from it). */
  readonly recordChanges: boolean;
  /** Lock the users a batch updates before reading them (a real run); a dry run only reads them. */
  readonly lockUsers: boolean;
  /** The id a record inserts a user with, by its index (`importedUserIds`). */
  readonly userIdOf: (index: number) => string;
  /** The task runs again a request an earlier task imported (a replay of the import log). */
  readonly replayed: boolean;
}

export function ownerKey(key: LoginIdKey, value: string): string {
  return `${key}\u0000${value}`;
}
