import { randomBytes } from 'node:crypto';
import type { TaskKind } from './index.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** `userimport_` / `userexport_` and 32 base32 characters (160 bits) from the system's CSPRNG. */
export function newTaskId(kind: TaskKind): string {
  return `user${kind}_${randomBase32()}`;
}

/** `upload_` and 32 base32 characters: the id of an import's upload. */
export function newUploadId(): string {
  return `upload_${randomBase32()}`;
}

function randomBase32(): string {
  let id = '';
  for (const byte of randomBytes(32)) id += BASE32[byte & 31];
  return id;
}

/** Whether a string has the shape of a task id of this kind (before any database lookup). */
export function isTaskId(kind: TaskKind, id: string): boolean {
  return TASK_ID[kind].test(id);
}

const TASK_ID: Readonly<Record<TaskKind, RegExp>> = {
  import: /^userimport_[A-Z2-7]{32}$/,
  export: /^userexport_[A-Z2-7]{32}$/,
};
