import type { ChangePosition } from '../db/user-change-log.js';
import { ApiError } from '../errors.js';

// A position in the change feed (docs/changes.md), handed to clients as an opaque token: the
// transaction id and user of the last event read, and, for a cursor an export named, the export's
// snapshot, whose transactions' events the export already holds and the feed skips.

/** Where a reader of the feed stands. */
export type ChangesCursor = ChangePosition;

/** Sorts before every user: a cursor at a transaction id, none of its events read. */
export const NO_USER = '00000000-0000-0000-0000-000000000000';

const DECODED =
  /^(\d{1,20})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.(\d{1,20}:\d{1,20}:[\d,]{0,100000}))?$/;

export function encodeCursor(cursor: ChangesCursor): string {
  const text = `${cursor.txid}.${cursor.userId}${cursor.snapshot ? `.${cursor.snapshot}` : ''}`;
  return Buffer.from(text).toString('base64url');
}

/** The cursor a token names; ChangesCursorInvalid when the service did not hand it out. */
export function decodeCursor(token: string): ChangesCursor {
  const match = DECODED.exec(Buffer.from(token, 'base64url').toString());
  if (!match) throw new ApiError('ChangesCursorInvalid', 'not a change feed cursor');
  const [, txid, userId, snapshot] = match as unknown as [string, string, string, string | undefined];
  return snapshot ? { txid, userId, snapshot } : { txid, userId };
}

/** The cursor an export of `snapshot` names: before every event its snapshot does not hold. */
export function snapshotCursor(snapshot: string): ChangesCursor {
  return { txid: snapshot.split(':', 1)[0] as string, userId: NO_USER, snapshot };
}

/**
 * The cursor at `position`, keeping an export's snapshot while events of its transactions may
 * still follow: until the position passes the snapshot's xmax, below which every transaction of
 * the snapshot had begun.
 */
export function keepSnapshot(
  position: Omit<ChangesCursor, 'snapshot'>,
  snapshot: string | undefined,
): ChangesCursor {
  if (snapshot === undefined || BigInt(position.txid) >= BigInt(snapshot.split(':')[1] as string))
    return { txid: position.txid, userId: position.userId };
  return { txid: position.txid, userId: position.userId, snapshot };
}
