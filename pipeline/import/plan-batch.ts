import { isDeepStrictEqual } from 'node:util';
import { EngineError, envelopeError } from '../errors.js';
import { KEY_OF_ATTRIBUTE } from '../identity/login-id-attributes.js';
import { applyInsert, applyUpdate, newUser } from './apply-record.js';
import {
  type BatchPlan,
  type BatchState,
  type ImportDetail,
  type ImportOptions,
  ownerKey,
} from './import-batch.js';
import { checkKeys, checkSub, checkValidity, claimIdentities } from './record-conflicts.js';
import { redactRecord } from './secret-members.js';
import { cloneUserState, type UserState } from './user-state.js';
import type { PreparedRecord } from './validate-record.js';
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
    const failure =
      checkKeys(valid.record, state) ??
      checkValidity(working) ??
      claimIdentities(working, existing, state.owners);
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
