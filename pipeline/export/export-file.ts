import type { ExportFormat } from '../../schemas/index.js';
import type { BlobHeaders } from '../blob/blob-storage.js';

const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
};

/** `<project>-<task_id>-<YYYYMMDDhhmmss>Z.<csv|ndjson>` (DECISIONS.md), stamped with `at` in UTC. */
export function exportFileName(projectId: string, taskId: string, format: ExportFormat, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${projectId}-${taskId}-${stamp}Z.${format}`;
}

/** How the file is served through its signed URL: its content type, and as an attachment. */
export function exportFileHeaders(fileName: string, format: ExportFormat): BlobHeaders {
  return {
    contentType: CONTENT_TYPES[format],
    contentDisposition: `attachment; filename="${fileName}"`,
  };
}
