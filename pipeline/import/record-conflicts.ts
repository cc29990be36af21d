import type { ImportRecord } from '../../schemas/index.js';
import { ApiError } from '../errors.js';
import { type BatchState, ownerKey } from './import-batch.js';
import type { UserState } from './user-state.js';
import type { ValidRecord } from './validate-record.js';

// The conflicts a record can meet with the stored users and the batch's earlier records: each
// check answers the error the record fails with, or undefined.

/**
 * `sub` keeps a new user's id when no user has it; on an update it must be the id of the user
 * the identifier matched (a record cannot move a user to another id).
 */
export function checkSub(
  valid: ValidRecord,
  existing: UserState | undefined,
  state: BatchState,
  current: ReadonlyMap<string, UserState>,
): ApiError | undefined {
  const sub = valid.sub;
  if (sub === undefined) return undefined;
  if (existing) {
    if (existing.id === sub) return undefined;
    return new ApiError('UserIDConflict', 'sub is not the id of the user the identifier matches', {
      sub,
    });
  }
  if (!state.takenIds.has(sub) && !current.has(sub)) return undefined;
  return new ApiError('UserIDConflict', 'sub is the id of another user', { sub });
}

/** The account's period, as the record leaves it with the bound it kept, must not end before it begins. */
export function checkValidity(user: UserState): ApiError | undefined {
  if (user.validFrom === null || user.validUntil === null || user.validFrom <= user.validUntil)
    return undefined;
  return new ApiError('ValidationFailed', 'invalid record', {
    causes: [
      {
        location: '/account_valid_until',
        kind: 'conflict',
        details: { message: 'the account would be valid until before it is valid from' },
      },
    ],
  });
}

/** Roles and groups must exist before an import assigns them. */
export function checkKeys(record: ImportRecord, state: BatchState): ApiError | undefined {
  const unknownRoles = (record.roles ?? []).filter((k) => !state.roleIds.has(k));
  if (unknownRoles.length > 0) {
    return new ApiError('RoleUnknownKeys', 'unknown role keys', { keys: unknownRoles });
  }
  const unknownGroups = (record.groups ?? []).filter((k) => !state.groupIds.has(k));
  if (unknownGroups.length > 0) {
    return new ApiError('GroupUnknownKeys', 'unknown group keys', { keys: unknownGroups });
  }
  return undefined;
}

/**
 * Takes the user's new login ids and OAuth connections in the ownership map, or fails with
 * DuplicatedIdentity when one belongs to another user; frees those the user no longer has.
 */
export function claimIdentities(
  user: UserState,
  previous: UserState | undefined,
  owners: Map<string, string>,
): ApiError | undefined {
  for (const [key, login] of user.loginIds) {
    const owner = owners.get(ownerKey(key, login.value));
    if (owner !== undefined && owner !== user.id) {
      return new ApiError('DuplicatedIdentity', 'identity already exists', { login_id_key: key });
    }
  }
  for (const [key, connection] of user.oauth) {
    const owner = owners.get(key);
    if (owner !== undefined && owner !== user.id) {
      return new ApiError('DuplicatedIdentity', 'identity already exists', {
        provider_alias: connection.alias,
      });
    }
  }
  for (const [key, login] of previous?.loginIds ?? []) {
    if (user.loginIds.get(key)?.value !== login.value) owners.delete(ownerKey(key, login.value));
  }
  for (const key of previous?.oauth.keys() ?? []) if (!user.oauth.has(key)) owners.delete(key);
  for (const [key, login] of user.loginIds) owners.set(ownerKey(key, login.value), user.id);
  for (const key of user.oauth.keys()) owners.set(key, user.id);
  return undefined;
}
