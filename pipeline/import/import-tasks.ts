import type { ImportFileSource, ImportTaskOptions } from '../../schemas/index.js';
import { newTaskId } from '../../schemas/task-id.js';
import { importMessage } from '../bus/task-message.js';
import type { IdempotencyKey, NewTask, RequestedBy } from '../db/tasks/admission.js';

/** What a file import's message says of its file (the request's members, as sent). */
export interface ImportFileRequest {
  /** The file's upload (a file named by URL is given an upload id too: its URL is not logged). */
  readonly source: { readonly upload_id: string };
  readonly format: string;
  readonly compression?: string;
  readonly csv?: { readonly columns: Readonly<Record<string, string>> };
  /** Another system's users, and how they are converted. */
  readonly from?: ImportFileSource['from'];
}

/** An import request to run as a task: its records' secret members already sealed, or its file. */
export interface SealedImport extends ImportTaskOptions {
  readonly project: string;
  readonly records?: readonly unknown[];
  /** A file import: the file it reads instead of records. */
  readonly file?: ImportFileRequest;
  /** The sealed list of the records' secrets (SealedRecords). */
  readonly secrets?: string | undefined;
  /** The import task whose logged message this one replays. */
  readonly replayOf?: string;
  /** The client's key for the request (an Idempotency-Key header). */
  readonly idempotency?: IdempotencyKey;
  readonly requestedBy?: RequestedBy;
}

/**
 * The import task of a request, and its message carrying the whole request (the task row keeps
 * its settings; the bus keeps the records, as the log of imports), for admitTask to record.
 */
export function importTask(request: SealedImport): NewTask {
  const id = newTaskId('import');
  const options: ImportTaskOptions = {
    identifier: request.identifier,
    upsert: request.upsert,
    ...(request.dry_run ? { dry_run: true } : {}),
  };
  return {
    id,
    project: request.project,
    kind: 'import',
    message: importMessage(id, {
      project_id: request.project,
      ...(request.replayOf ? { replay_of: request.replayOf } : {}),
      request: {
        ...options,
        ...(request.secrets ? { secrets: request.secrets } : {}),
        ...(request.records ? { records: request.records } : {}),
        ...request.file,
      },
    }),
    options: { ...options },
    // A file's records are counted as its task takes it in.
    total: request.records?.length ?? 0,
    ...(request.replayOf ? { replayOf: request.replayOf } : {}),
    ...(request.idempotency ? { idempotency: request.idempotency } : {}),
    ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
  };
}
