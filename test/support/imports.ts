import { type TaskEndpoints, taskEndpoints } from './task-endpoints.js';
import { type TaskService, type TaskServiceOptions, useTaskService } from './task-service.js';

/** Headers of an import call that came through a trusted TLS-terminating proxy. */
export const HTTPS = { 'x-forwarded-proto': 'https' };

/** The summary of an import of `records` records, every one of them inserted. */
export function insertedSummary(records: number): Record<string, number> {
  return { total: records, inserted: records, updated: 0, skipped: 0, failed: 0, warnings: 0 };
}

/** The import service of one describe block: its schema, the facade, a bus and running workers. */
export interface ImportService extends TaskService, TaskEndpoints {}

/** Sets up a schema, a bus on the given transport and the workers for the calling describe block. */
export function useImportService(
  transport: 'kafka' | 'postgres',
  project: Record<string, unknown> = {},
  settings: Record<string, unknown> = {},
  options: Omit<TaskServiceOptions, 'project' | 'settings'> = {},
): ImportService {
  const service = useTaskService(transport, {
    ...options,
    project,
    settings: { trust_proxy: true, ...settings },
  });
  return { ...service, ...taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS) };
}
