import type { ImportFileSource } from '../../schemas/index.js';
import type { Queryable } from './pool.js';

// The statements on import_files and import_file_frames (docs/file-imports.md): uploads, the file an
// import task takes in, the frames of its sealed copy, and the sweeps of both.

/** An upload, and once an import named it, how that import reads it. */
export interface ImportFileRow {
  readonly project_id: string;
  readonly upload_id: string;
  readonly upload_blob: string;
  readonly expires_at: Date;
  readonly task_id: string | null;
  readonly source: ImportFileSource | null;
  readonly sealed_blob: string | null;
  /** Records of the sealed copy once the upload was taken in whole (a bigint's text). */
  readonly records: string | null;
  /** The parts its records were routed to as it was taken in (NULL: not decided yet). */
  readonly parts: number | null;
}

/** One sealed frame of a file: `records` records of one part, by their index in the file. */
export interface FrameRow {
  readonly frame: number;
  readonly part: number;
  readonly first_record: number;
  readonly last_record: number;
  readonly records: number;
  readonly block_id: string;
  readonly sealed_start: number;
  readonly sealed_bytes: number;
  readonly source_end: number;
}

const FILE_COLUMNS =
  'project_id, upload_id, upload_blob, expires_at, task_id, source, sealed_blob, records, parts';
const FRAME_COLUMNS = `frame, part, first_record::float8 AS first_record, last_record::float8 AS last_record,
  records, block_id,
  sealed_start::float8 AS sealed_start, sealed_bytes, source_end::float8 AS source_end`;

/** Records a new upload of the project, writable through its URL until `expiresAt`. */
export async function insertUpload(
  db: Queryable,
  upload: { project: string; uploadId: string; blob: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO import_files (project_id, upload_id, upload_blob, expires_at) VALUES ($1, $2, $3, $4)',
    [upload.project, upload.uploadId, upload.blob, upload.expiresAt],
  );
}

/**
 * Records a file named by URL as read by the import `taskId` (a request repeated with its
 * Idempotency-Key records nothing more).
 */
export async function insertNamedFile(
  db: Queryable,
  file: {
    project: string;
    uploadId: string;
    blob: string;
    taskId: string;
    source: ImportFileSource;
    sealedBlob: string;
  },
): Promise<void> {
  await db.query(
    `WITH named AS (
       INSERT INTO import_files (project_id, upload_id, upload_blob, expires_at, task_id, source, sealed_blob)
       VALUES ($1, $2, $3, clock_timestamp(), $4, $5, $6) ON CONFLICT (task_id) DO NOTHING
       RETURNING source)
     UPDATE tasks SET source_bytes = (named.source->>'bytes')::bigint, source_bytes_read = 0
       FROM named WHERE tasks.id = $4 AND tasks.project_id = $1`,
    [file.project, file.uploadId, file.blob, file.taskId, JSON.stringify(file.source), file.sealedBlob],
  );
}

/** How many uploads of the project are open: unexpired, named by no import yet. */
export async function countOpenUploads(db: Queryable, project: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM import_files
      WHERE project_id = $1 AND task_id IS NULL AND expires_at > clock_timestamp()`,
    [project],
  );
  return rows[0]?.n ?? 0;
}

/** The project's upload, whatever its state; another project's does not exist here. */
export async function findUpload(
  db: Queryable,
  project: string,
  uploadId: string,
): Promise<ImportFileRow | undefined> {
  const { rows } = await db.query<ImportFileRow>(
    `SELECT ${FILE_COLUMNS} FROM import_files WHERE project_id = $1 AND upload_id = $2`,
    [project, uploadId],
  );
  return rows[0];
}

/**
 * Gives the upload to the import `taskId` with how it reads it, in the transaction that admits the
 * task: false when the upload is gone, expired, or another import has it (the same task again, a
 * request repeated with its Idempotency-Key, keeps it and how it was first read).
 */
export async function takeUpload(
  db: Queryable,
  project: string,
  uploadId: string,
  taskId: string,
  source: ImportFileSource,
  sealedBlob: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `WITH taken AS (
       UPDATE import_files
          SET task_id = $3, source = coalesce(source, $4::jsonb), sealed_blob = coalesce(sealed_blob, $5)
        WHERE project_id = $1 AND upload_id = $2
          AND (task_id = $3 OR (task_id IS NULL AND expires_at > clock_timestamp()))
        RETURNING source)
     UPDATE tasks SET source_bytes = (taken.source->>'bytes')::bigint, source_bytes_read = 0
       FROM taken WHERE tasks.id = $3 AND tasks.project_id = $1 RETURNING tasks.id`,
    [project, uploadId, taskId, JSON.stringify(source), sealedBlob],
  );
  return rows.length === 1;
}

/** What earlier attempts took in: the records (a prefix of the file), frames, sealed bytes, blocks. */
export async function takenIn(
  db: Queryable,
  file: ImportFileRow,
): Promise<{ records: number; frames: number; sealedBytes: number; blocks: string[] }> {
  const { rows } = await db.query<{ records: number; frames: number; sealed: number }>(
    `SELECT coalesce(max(last_record) + 1, 0)::float8 AS records, coalesce(max(frame) + 1, 0) AS frames,
            coalesce(max(sealed_start + sealed_bytes), 0)::float8 AS sealed
       FROM import_file_frames WHERE project_id = $1 AND upload_id = $2`,
    [file.project_id, file.upload_id],
  );
  const row = rows[0];
  return {
    records: row?.records ?? 0,
    frames: row?.frames ?? 0,
    sealedBytes: row?.sealed ?? 0,
    blocks: await frameBlocks(db, file),
  };
}

/** The block ids of the frames taken in, in order: the sealed copy's committed block list. */
async function frameBlocks(db: Queryable, file: ImportFileRow): Promise<string[]> {
  const { rows } = await db.query<{ block_id: string }>(
    `SELECT block_id FROM import_file_frames WHERE project_id = $1 AND upload_id = $2
      GROUP BY block_id ORDER BY min(frame)`,
    [file.project_id, file.upload_id],
  );
  return rows.map((r) => r.block_id);
}

/** The frames of `part` from the one holding record `from` (an index in the file) on, in order. */
export async function framesFrom(
  db: Queryable,
  file: ImportFileRow,
  from: number,
  part = 0,
): Promise<FrameRow[]> {
  const { rows } = await db.query<FrameRow>(
    `SELECT ${FRAME_COLUMNS} FROM import_file_frames
      WHERE project_id = $1 AND upload_id = $2 AND part = $4 AND last_record >= $3 ORDER BY frame`,
    [file.project_id, file.upload_id, from, part],
  );
  return rows;
}

/** Fixes the parts the file's records are routed to, once: the number first fixed. */
export async function fixFileParts(db: Queryable, file: ImportFileRow, parts: number): Promise<number> {
  const { rows } = await db.query<{ parts: number }>(
    `UPDATE import_files SET parts = coalesce(parts, $3) WHERE project_id = $1 AND upload_id = $2
      RETURNING parts`,
    [file.project_id, file.upload_id, parts],
  );
  return rows[0]?.parts ?? parts;
}

/** Records frames of one committed block. */
export async function insertFrames(
  db: Queryable,
  file: ImportFileRow,
  frames: readonly FrameRow[],
): Promise<void> {
  await db.query(
    `INSERT INTO import_file_frames
       (project_id, upload_id, frame, part, first_record, last_record, records, block_id, sealed_start,
        sealed_bytes, source_end)
     SELECT $1, $2, f.frame, f.part, f.first_record, f.last_record, f.records, f.block_id, f.sealed_start,
            f.sealed_bytes, f.source_end
       FROM jsonb_to_recordset($3::jsonb) AS f(frame integer, part integer, first_record bigint,
            last_record bigint, records integer, block_id text, sealed_start bigint, sealed_bytes integer,
            source_end bigint)`,
    [file.project_id, file.upload_id, JSON.stringify(frames)],
  );
}

/** How much of the upload the task has read, of its size, for its status. */
export async function saveSourceProgress(
  db: Queryable,
  file: ImportFileRow,
  read: number,
  size: number,
): Promise<void> {
  await db.query(
    `UPDATE tasks SET source_bytes_read = $3, source_bytes = $4 WHERE id = $2 AND project_id = $1`,
    [file.project_id, file.task_id, read, size],
  );
}

/**
 * Marks the upload taken in whole: its record count (also the task's total) and how long the sealed
 * copy is kept for a replay.
 */
export async function finishIntake(
  db: Queryable,
  file: ImportFileRow,
  records: number,
  keepSeconds: number,
): Promise<void> {
  await db.query(
    `WITH f AS (
       UPDATE import_files SET records = $3, kept_until = clock_timestamp() + make_interval(secs => $4)
        WHERE project_id = $1 AND upload_id = $2 RETURNING task_id)
     UPDATE tasks SET progress_total = $3 FROM f WHERE tasks.id = f.task_id AND tasks.project_id = $1`,
    [file.project_id, file.upload_id, records, keepSeconds],
  );
}

/**
 * Gives a task that reads a file another task took in (a replay) the file's record count as its
 * total, and the file's size as read.
 */
export async function countFileFor(db: Queryable, file: ImportFileRow, taskId: string): Promise<void> {
  await db.query(
    `UPDATE tasks SET progress_total = $3, source_bytes = $4, source_bytes_read = $4
      WHERE id = $2 AND project_id = $1 AND status = 'pending'`,
    [file.project_id, taskId, Number(file.records), file.source?.bytes ?? 0],
  );
}

/**
 * Files to sweep: uploads no import named by their end, sealed copies past keeping, and files
 * whose import ended before it took them in whole.
 */
export async function filesToSweep(db: Queryable, limit: number): Promise<ImportFileRow[]> {
  const { rows } = await db.query<ImportFileRow>(
    `(SELECT ${FILE_COLUMNS} FROM import_files
       WHERE task_id IS NULL AND expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1)
     UNION ALL
     (SELECT ${FILE_COLUMNS} FROM import_files
       WHERE kept_until < clock_timestamp() ORDER BY kept_until LIMIT $1)
     UNION ALL
     (SELECT ${FILE_COLUMNS} FROM import_files f
       WHERE f.task_id IS NOT NULL AND f.kept_until IS NULL
         AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = f.task_id AND t.project_id = f.project_id
                           AND t.status = 'pending')
       LIMIT $1)`,
    [limit],
  );
  return rows;
}

/** Forgets a swept file (its frames with it). */
export async function deleteFile(db: Queryable, file: ImportFileRow): Promise<void> {
  await db.query('DELETE FROM import_files WHERE project_id = $1 AND upload_id = $2', [
    file.project_id,
    file.upload_id,
  ]);
}

/** Of these blob names, those an import file names (its upload or its sealed copy). */
export async function fileBlobNames(db: Queryable, names: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT n.name FROM unnest($1::text[]) AS n(name)
      WHERE EXISTS (SELECT 1 FROM import_files f WHERE f.upload_blob = n.name OR f.sealed_blob = n.name)`,
    [names],
  );
  return new Set(rows.map((r) => r.name));
}
