import { createHash } from 'node:crypto';

/**
 * The ids an import gives the users it inserts: the record's place in the request, under a prefix
 * drawn from the task that first imported the request (`root`). A replay of that request, whatever
 * task runs it, names the same ids, so it can tell a user it inserted the first time even after
 * the user's identifier changed, instead of inserting the person a second time.
 *
 * The UUID: ten bytes of SHA-256 of the root (version 8, RFC 9562's custom layout, and its
 * variant), then the record's index in six bytes.
 */
export function importedUserIds(root: string): (index: number) => string {
  const prefix = createHash('sha256').update(root).digest().subarray(0, 10);
  prefix[6] = ((prefix[6] ?? 0) & 0x0f) | 0x80;
  prefix[8] = ((prefix[8] ?? 0) & 0x3f) | 0x80;
  const head = prefix.toString('hex');
  const shape = (hex: string) =>
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return (index) => shape(head + index.toString(16).padStart(12, '0'));
}
