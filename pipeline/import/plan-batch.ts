import { isDeepStrictEqual } from 'node:util';
import type { ImportRecord } from '../../schemas/index.js';
import type { ProjectConfig } from '../config.js';
import { ApiError, EngineError, envelopeError } from '../errors.js';
import { ATTRIBUTE_OF_KEY, KEY_OF_ATTRIBUTE } from '../identity/login-id-attributes.js';
import { PROFILE_ATTRIBUTES } from '../identity/standard-attributes.js';
import { oauthKey } from './identity-members.js';
import {
  type BatchPlan,
  type BatchState,
  type ImportDetail,
  type ImportOptions,
  ownerKey,
} from './import-batch.js';
import { redactRecord } from './secret-members.js';
import {
  claimKey,
  cloneUserState,
  newRowId as newId,
  type OAuthState,
  type UserState,
} from './user-state.js';
import type { PreparedRecord, ValidRecord } from './validate-record.js';
import {
  type ImportWarning,
  insertWarnings,
  repeatWarning,
  SKIP_WARNING,
  updateWarnings,
} from './warnings.js';

/**
 * Applies the records of a batch, in order, to the loaded state (decisions 3.2): a later record sees the
 * effect of an earlier one; a record that fails leaves the state as it was. Pure: no I/O.
 */
export function planBatch(
  records: readonly PreparedRecord[],
  state: BatchState,
  options: ImportOptions,
): BatchPlan {
  const current = new Map<string, UserState>();
  const before = new Map<string, UserState | undefined>();
  const details: ImportDetail[] = [];
  const identifierKey = KEY_OF_ATTRIBUTE[options.identifier];

  const userFor = (id: string): UserState | undefined => current.get(id) ?? state.users.get(id);

  for (const { index, raw, checked, repeats } of records) {
    const record = redactRecord(raw);
    const repeat: ImportWarning[] = repeats === undefined ? [] : [repeatWarning(options.identifier, repeats)];
    if (!checked.ok) {
      details.push({ index, outcome: 'failed', record, errors: [envelopeError(checked.error)] });
      continue;
    }
    const valid = checked.valid;
    const identity = valid.loginIds.get(identifierKey);
    if (!identity)
      throw new EngineError('RecordIdentifierMissing', 'a valid record always has its identifier');
    const ownerId = state.owners.get(ownerKey(identifierKey, identity.value));
    const existing = ownerId ? userFor(ownerId) : undefined;

    if (ownerId && !options.upsert) {
      details.push({
        index,
        outcome: 'skipped',
        user_id: ownerId,
        record,
        warnings: [...repeat, SKIP_WARNING],
      });
      continue;
    }
    const isInsert = !ownerId || !existing;
    const userId = valid.sub ?? options.userIdOf(index);
    if (isInsert && options.replayed && valid.sub === undefined && state.takenIds.has(userId)) {
      // The user this record inserted the first time exists under another identifier value now.
      details.push({
        index,
        outcome: 'skipped',
        user_id: userId,
        record,
        warnings: [...repeat, replayedWarning(options.identifier)],
      });
      continue;
    }
    const idFailure = checkSub(valid, existing, state, current);
    if (idFailure) {
      details.push({ index, outcome: 'failed', record, errors: [envelopeError(idFailure)] });
      continue;
    }
    const working = existing ? cloneUserState(existing) : newUser(valid, userId);
    if (isInsert) applyInsert(valid, working, options.project);
    else applyUpdate(valid, working, options.project);
    const failure = checkKeys(valid.record, state) ?? claimIdentities(working, existing, state.owners);
    if (failure) {
      details.push({ index, outcome: 'failed', record, errors: [envelopeError(failure)] });
      continue;
    }
    if (!before.has(working.id)) before.set(working.id, existing ? cloneUserState(existing) : undefined);
    current.set(working.id, working);
    const warnings = [
      ...repeat,
      ...(isInsert
        ? insertWarnings(valid.record, options.project)
        : updateWarnings(valid.record, options.project)),
    ];
    details.push({
      index,
      outcome: isInsert ? 'inserted' : 'updated',
      user_id: working.id,
      record,
      ...(warnings.length > 0 ? { warnings } : {}),
    });
  }

  const changed = new Map<string, { before: UserState | undefined; after: UserState }>();
  for (const [id, after] of current) {
    const was = before.get(id);
    if (!was || !isDeepStrictEqual(was, after)) changed.set(id, { before: was, after });
  }
  return { details, changed };
}

/** The warning of a replayed record whose user exists, with another value of the identifier. */
function replayedWarning(identifier: string): ImportWarning {
  return {
    message: `not inserted again: the user this record inserted when first imported exists with another ${identifier}`,
  };
}

function newUser(valid: ValidRecord, id: string): UserState {
  return {
    id,
    standard: {},
    custom: {},
    disabled: valid.record.disabled ?? false,
    loginIds: new Map(),
    oauth: new Map(),
    verified: new Set(),
    mfaEmail: undefined,
    mfaPhone: undefined,
    roles: new Set(),
    groups: new Set(),
    secrets: valid.secrets,
  };
}

/**
 * `sub` keeps a new user's id when no user has it; on an update it must be the id of the user
 * the identifier matched (a record cannot move a user to another id).
 */
function checkSub(
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

/** A new user: every non-null value of the record (nulls and false flags only warn). */
function applyInsert(valid: ValidRecord, user: UserState, project: ProjectConfig): void {
  applyCommon(valid, user, project);
  const { record } = valid;
  if (record.email_verified === true && user.loginIds.has('email')) {
    user.verified.add(claimKey('email', user.loginIds.get('email')?.value ?? ''));
  }
  if (record.phone_number_verified === true && user.loginIds.has('phone')) {
    user.verified.add(claimKey('phone_number', user.loginIds.get('phone')?.value ?? ''));
  }
}

/** An existing user: decisions 3.2, member by member. */
function applyUpdate(valid: ValidRecord, user: UserState, project: ProjectConfig): void {
  applyCommon(valid, user, project);
  const { record } = valid;
  for (const [flag, key, name] of [
    ['email_verified', 'email', 'email'],
    ['phone_number_verified', 'phone', 'phone_number'],
  ] as const) {
    const value = user.loginIds.get(key)?.value;
    if (record[flag] === undefined || value === undefined) continue;
    if (record[flag]) user.verified.add(claimKey(name, value));
    else user.verified.delete(claimKey(name, value));
  }
  if (record.disabled !== undefined) user.disabled = record.disabled;
}

/** What inserts and updates share: present non-null values set, explicit nulls delete. */
function applyCommon(valid: ValidRecord, user: UserState, project: ProjectConfig): void {
  const { record } = valid;
  applyIdentities(valid, user);
  for (const member of PROFILE_ATTRIBUTES) {
    const value = record[member];
    if (value === undefined) continue;
    if (value === null) delete user.standard[member];
    else user.standard[member] = value;
  }
  for (const [name, value] of Object.entries(record.custom_attributes ?? {})) {
    // Undeclared custom attributes are ignored (with a warning).
    if (!project.customAttributes.has(name)) continue;
    if (value === null) delete user.custom[name];
    else user.custom[name] = value;
  }
  if (record.roles) user.roles = new Set(record.roles);
  if (record.groups) user.groups = new Set(record.groups);
  for (const slot of ['mfaEmail', 'mfaPhone'] as const) {
    const value = valid[slot];
    if (value === undefined) continue;
    if (value === null) user[slot] = undefined;
    else if (user[slot]?.value !== value) user[slot] = { id: newId(), value };
  }
}

/**
 * Login ids and OAuth connections, in the order of the record's `identities` (new rows get
 * increasing ids in that order), then the login ids of the record's own members. With
 * `identities` given, the user's OAuth connections become exactly its list (like roles).
 */
function applyIdentities(valid: ValidRecord, user: UserState): void {
  const logins = [...valid.loginIds];
  const connections = [...(valid.oauth ?? [])];
  const oauth = new Map<string, OAuthState>();
  const takeLogin = () => {
    const [key, value] = logins.shift() ?? [];
    if (!key || value === undefined) return;
    const attribute = ATTRIBUTE_OF_KEY[key];
    if (value === null) {
      user.loginIds.delete(key);
      delete user.standard[attribute];
      return;
    }
    const previous = user.loginIds.get(key);
    const id = previous && previous.value === value.value ? previous.id : newId();
    user.loginIds.set(key, { id, value: value.value, original: value.original });
    user.standard[attribute] = value.value;
  };
  const takeConnection = () => {
    const connection = connections.shift();
    if (!connection) return;
    const key = oauthKey(connection.alias, connection.subject);
    const previous = user.oauth.get(key);
    const same = previous && isDeepStrictEqual({ ...previous, id: '' }, { ...connection, id: '' });
    oauth.set(key, { ...connection, id: same ? previous.id : newId() });
  };
  for (const identity of valid.record.identities ?? []) {
    if (identity.type === 'oauth') takeConnection();
    else takeLogin();
  }
  while (logins.length > 0) takeLogin();
  if (valid.oauth) user.oauth = oauth;
}

/** Roles and groups must exist before an import assigns them. */
function checkKeys(record: ImportRecord, state: BatchState): ApiError | undefined {
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
function claimIdentities(
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
