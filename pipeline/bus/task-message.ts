import { type TaskMessage, validateTaskMessage } from '../../schemas/index.js';
import type { BusMessage } from './bus.js';

// The text of task messages (`schemas/task-message`): written here, read back whole by a replay.
// Workers take the task id and kind from the bus and stream an import's records out of the text.
//
// An import's text is JSON Lines: the message without its records on the first line, then one
// record per line (`importMessage`), so that a worker parses each record with one JSON.parse
// instead of a token at a time.

/** An export's message: its task. */
export function exportMessage(taskId: string): string {
  return JSON.stringify({ task_id: taskId, kind: 'export' });
}

/** The message that asks any worker to write one part of a split export (its plan: the blob). */
export function exportPartMessage(taskId: string, blob: string, part: number): BusMessage {
  return {
    task_id: taskId,
    kind: 'export',
    key: `${taskId}/${blob}/${part}`,
    body: JSON.stringify({ task_id: taskId, kind: 'export', part, blob }),
  };
}

/**
 * The message that asks any worker to apply one part of a split file import (file-parts.ts): a
 * wake-up, not a request (a replay passes over it).
 */
export function importPartMessage(taskId: string, projectId: string, part: number): BusMessage {
  return {
    task_id: taskId,
    kind: 'import',
    key: `${taskId}/part/${part}`,
    body: JSON.stringify({ task_id: taskId, kind: 'import', project_id: projectId, part }),
  };
}

/** What an import's message carries beside its task: the request, its records' secrets sealed. */
export interface LoggedImport {
  readonly project_id: string;
  readonly replay_of?: string;
  readonly request: {
    readonly identifier: string;
    readonly upsert: boolean;
    readonly dry_run?: boolean;
    /** The sealed list of the records' secrets, written before the records (the worker opens it first). */
    readonly secrets?: string;
    /** The records, or (a file import) none: the file named by the request's `source` holds them. */
    readonly records?: readonly unknown[];
    readonly source?: { readonly upload_id: string };
    readonly format?: string;
    readonly compression?: string;
    readonly csv?: { readonly columns: Readonly<Record<string, string>> };
    readonly from?: unknown;
  };
}

/**
 * An import's message: the whole request, so that the import topic is the log of imports. JSON
 * Lines: the message without `request.records` first, then each record on a line of its own
 * (compact JSON holds no line break).
 */
export function importMessage(taskId: string, logged: LoggedImport): string {
  const { records, ...request } = logged.request;
  const lines = [JSON.stringify({ task_id: taskId, kind: 'import', ...logged, request })];
  for (const record of records ?? []) lines.push(JSON.stringify(record));
  return lines.join('\n');
}

/**
 * The task message a bus carried, with an import's records back in `request.records`; undefined
 * when it is not one (not JSON, not the layout of `importMessage`, or off the schema).
 */
export function parseTaskMessage(body: string): TaskMessage | undefined {
  const [first = '', ...lines] = body.split('\n');
  let parsed: unknown;
  try {
    parsed = JSON.parse(first);
    const request = (parsed as { request?: unknown } | null)?.request;
    if (request === undefined) {
      if (lines.length > 0) return undefined;
    } else {
      if (typeof request !== 'object' || request === null || 'records' in request) return undefined;
      // A file import's records are in its file, not its message.
      if ('source' in request) {
        if (lines.length > 0) return undefined;
      } else (request as { records?: unknown }).records = lines.map((line) => JSON.parse(line));
    }
  } catch {
    return undefined;
  }
  return validateTaskMessage(parsed) ? parsed : undefined;
}

/** The upload a file import's message names (its first line's `request.source`); undefined for records. */
export function messageUpload(body: string): string | undefined {
  const end = body.indexOf('\n');
  try {
    const first = JSON.parse(end === -1 ? body : body.slice(0, end)) as {
      request?: { source?: { upload_id?: unknown } };
    };
    const id = first.request?.source?.upload_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The part a message asks a worker to apply (its first line's `part`); undefined for a task's own. */
export function messagePart(body: string): number | undefined {
  const end = body.indexOf('\n');
  try {
    const part = (JSON.parse(end === -1 ? body : body.slice(0, end)) as { part?: unknown }).part;
    return typeof part === 'number' && Number.isInteger(part) && part >= 0 ? part : undefined;
  } catch {
    return undefined;
  }
}
