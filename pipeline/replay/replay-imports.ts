import { randomBytes } from 'node:crypto';
import type { ImportLog, LoggedMessage, LogOffsets, LogPoint } from '../bus/bus.js';
import { parseTaskMessage } from '../bus/task-message.js';
import { findUpload } from '../db/import-files.js';
import {
  advanceReplay,
  findOpenReplay,
  finishReplay,
  insertReplay,
  lockReplay,
  type ReplayKey,
} from '../db/import-replays.js';
import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { importTask } from '../import/import-tasks.js';
import { admitIn } from '../tasks/admit-task.js';

/** What to replay: from a point of the import log, up to another (or its end when the replay starts). */
export interface ReplayRequest {
  readonly from: LogPoint;
  readonly to?: LogPoint;
  /** Forces `upsert` on every replayed task (otherwise each keeps its own). */
  readonly upsert?: boolean;
  /** Lists what would run and creates nothing. */
  readonly dryRun?: boolean;
}

/** One logged import as a replay meets it. */
export interface ReplayedImport {
  readonly partition: string;
  readonly offset: string;
  readonly logged_at: Date;
  /** The task the message was logged for. */
  readonly replay_of: string;
  readonly records: number;
  readonly upsert: boolean;
  /** The task made from it (undefined in a dry run, or when it was not made). */
  readonly task_id?: string;
  /** Why no task was made: another project's message, or one that is not an import request. */
  readonly skipped?: string;
}

/** Where a replay stands, after each message. */
export interface ReplayProgress {
  readonly replay_id: string;
  /** Messages of the range read so far, and in all. */
  readonly messages: number;
  readonly messages_total: number;
  /** Tasks made (in a dry run: that would be made) and their records. */
  readonly tasks: number;
  readonly records: number;
  readonly skipped: number;
}

/** Where a replay stands when it ends: finished, or interrupted (to be started again). */
export interface ReplaySummary extends ReplayProgress {
  readonly finished: boolean;
  readonly dry_run: boolean;
  readonly resumed: boolean;
}

/** What a replay reads from and writes to. */
export interface ReplayTarget {
  readonly pool: Pool;
  readonly log: ImportLog;
  /** Which bus the log is ("kafka" or "postgres"), part of what names a replay. */
  readonly bus: string;
  /** Prefix of the replay's consumer group (the bus's topic prefix). */
  readonly groupPrefix: string;
  /** Only messages of this project are replayed. */
  readonly project: string;
}

/**
 * Replays the import log from `from` up to `to` (or the end offsets taken when it first starts):
 * one new import task per logged request, with `replay_of` naming the original and the request's
 * records as they were logged (secrets still sealed), applied by the normal workers. Each task is
 * created in the transaction that moves the replay past its message, so a replay interrupted and
 * started again with the same request goes on where it stopped and creates no task twice.
 */
export async function replayImports(
  target: ReplayTarget,
  request: ReplayRequest,
  events: {
    onImport?(i: ReplayedImport): void;
    onProgress?(p: ReplayProgress): void;
    signal?: AbortSignal;
  } = {},
): Promise<ReplaySummary> {
  const { pool, log } = target;
  const key: ReplayKey = {
    bus: target.bus,
    from: pointText(request.from),
    to: request.to ? pointText(request.to) : null,
    upsert: request.upsert ?? null,
  };
  const open = request.dryRun ? undefined : await findOpenReplay(pool, key);
  let replayId = open?.id ?? `replay_${randomBytes(10).toString('hex')}`;
  let from = open?.next_offsets;
  let to = open?.end_offsets;
  if (!from || !to) {
    const end = await log.endOffsets();
    from = await log.offsetsAt(request.from);
    to = request.to ? lowest(await log.offsetsAt(request.to), end) : end;
    if (!request.dryRun) replayId = (await insertReplay(pool, replayId, key, from, to)).id;
  }
  const counts = {
    messages: 0,
    messages_total: await log.count(from, to),
    tasks: open?.tasks ?? 0,
    records: open?.records ?? 0,
    skipped: 0,
  };
  const progress = (): ReplayProgress => ({ replay_id: replayId, ...counts });

  async function replayOne(message: LoggedMessage): Promise<void> {
    const logged = parseTaskMessage(message.body);
    const ours = !message.again && logged?.kind === 'import' && logged.project_id === target.project;
    // A file import replays while its file is kept (taken in whole, not yet swept).
    const uploadId = logged?.request?.source?.upload_id;
    const file = ours && uploadId ? await findUpload(pool, target.project, uploadId) : undefined;
    const fileKept = file !== undefined && file.records !== null;
    const usable = ours && logged?.request !== undefined && (uploadId === undefined || fileKept);
    const upsert = request.upsert ?? logged?.request?.upsert ?? false;
    const records = logged?.request?.records?.length ?? (fileKept ? Number(file.records) : 0);
    const seen: ReplayedImport = {
      partition: message.partition,
      offset: message.offset,
      logged_at: message.timestamp,
      replay_of: logged?.task_id ?? '',
      records,
      upsert,
      ...(usable ? {} : { skipped: skipReason(message, logged, ours) }),
    };
    counts.messages++;
    if (request.dryRun || !logged?.request || !usable) {
      if (!usable) counts.skipped++;
      else {
        counts.tasks++; // would be made
        counts.records += seen.records;
      }
      events.onImport?.(seen);
      events.onProgress?.(progress());
      return;
    }
    const loggedRequest = logged.request;
    const { records: loggedRecords, secrets, format, compression, csv, from: convertedFrom } = loggedRequest;
    const made = await withTransaction(pool, async (client) => {
      const position = await lockReplay(client, replayId);
      if (BigInt(message.offset) < BigInt(position[message.partition] ?? '0')) return undefined; // done before
      const task = await admitIn(
        client,
        importTask({
          project: target.project,
          identifier: loggedRequest.identifier,
          upsert,
          ...(loggedRequest.dry_run ? { dry_run: true } : {}),
          ...(loggedRecords
            ? { records: loggedRecords, secrets }
            : {
                file: {
                  source: { upload_id: uploadId as string },
                  format: format as string,
                  ...(compression ? { compression } : {}),
                  ...(csv ? { csv } : {}),
                  ...(convertedFrom ? { from: convertedFrom } : {}),
                },
              }),
          // The first import of the request: its users' ids derive from it (imported-user-id.ts).
          replayOf: logged.replay_of ?? logged.task_id,
        }),
        // A replay is an operator's, and bounded by its own range: no backlog limit.
        { kind: 'import', pendingRecords: undefined },
      );
      const next = (BigInt(message.offset) + 1n).toString();
      await advanceReplay(client, replayId, message.partition, next, records);
      return task;
    });
    if (made) {
      counts.tasks++;
      counts.records += records;
    }
    events.onImport?.({ ...seen, ...(made ? { task_id: made.id } : {}) });
    events.onProgress?.(progress());
  }

  await log.read(`${target.groupPrefix}user-import-replay-${replayId}`, from, to, replayOne, events.signal);
  const finished = !events.signal?.aborted;
  if (finished && !request.dryRun) await finishReplay(pool, replayId);
  return { ...progress(), finished, dry_run: request.dryRun === true, resumed: open !== undefined };
}

/** Why a logged message makes no task. */
function skipReason(
  message: LoggedMessage,
  logged: ReturnType<typeof parseTaskMessage>,
  ours: boolean,
): string {
  if (message.again) return 'a task offered again to the workers, not a new request';
  if (logged?.part !== undefined) return 'a part of a file import, not a request';
  if (ours && logged?.request?.source)
    return 'a file import whose file is no longer kept (IMPORT_FILE_RETENTION_SECONDS)';
  return logged ? 'another project, or not an import' : 'not a task message';
}

/** A point as the replay's key keeps it: the time in RFC 3339, or the offset. */
function pointText(point: LogPoint): string {
  return 'time' in point ? point.time.toISOString() : BigInt(point.offset).toString();
}

/** Per partition, the lower of two offsets. */
function lowest(a: LogOffsets, b: LogOffsets): LogOffsets {
  return Object.fromEntries(
    Object.entries(b).map(([p, end]) => [p, BigInt(a[p] ?? end) < BigInt(end) ? (a[p] ?? end) : end]),
  );
}
