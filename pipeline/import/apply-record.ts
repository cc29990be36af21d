import { isDeepStrictEqual } from 'node:util';
import type { ProjectConfig } from '../config.js';
import { ATTRIBUTE_OF_KEY } from '../identity/login-id-attributes.js';
import { PROFILE_ATTRIBUTES } from '../identity/standard-attributes.js';
import { oauthKey } from './identity-members.js';
import { claimKey, newRowId as newId, type OAuthState, type UserState } from './user-state.js';
import type { ValidRecord } from './validate-record.js';

// How a valid record changes the state of its user (decisions 3.2): in place, on a working copy
// that planBatch keeps only when the record's checks pass.

/** The state of a user a record inserts, before the record's values are applied. */
export function newUser(valid: ValidRecord, id: string): UserState {
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
    validFrom: null,
    validUntil: null,
    secrets: valid.secrets,
  };
}

/** A new user: every non-null value of the record (nulls and false flags only warn). */
export function applyInsert(valid: ValidRecord, user: UserState, project: ProjectConfig): void {
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
export function applyUpdate(valid: ValidRecord, user: UserState, project: ProjectConfig): void {
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
  if (valid.validity.from !== undefined) user.validFrom = valid.validity.from;
  if (valid.validity.until !== undefined) user.validUntil = valid.validity.until;
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
