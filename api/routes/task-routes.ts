import type { Middleware } from 'koa';
import type { ServiceConfig } from '../../pipeline/config.js';
import type { ExportService } from '../../pipeline/services/export-service.js';
import type { ImportService } from '../../pipeline/services/import-service.js';

/** What the import and export routes stand on. */
export interface TaskRouteDependencies {
  readonly config: ServiceConfig;
  readonly imports: ImportService;
  readonly exports: ExportService;
  /** Host and admin JWT checks, shared with the other admin routes. */
  readonly admin: readonly Middleware[];
}
