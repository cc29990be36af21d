import { BlockBlobClient } from '@azure/storage-blob';
import { adminToken } from './admin-api.js';
import { type ExportService, useExportService } from './exports.js';
import { HTTPS } from './imports.js';
import { type TaskEndpoints, taskEndpoints } from './task-endpoints.js';
import type { TaskServiceOptions } from './task-service.js';

/** A service with blob storage, its import endpoints, and uploads through the API's signed URLs. */
export interface FileImportService extends ExportService {
  readonly imports: TaskEndpoints;
  /** Asks for an upload and answers the API's response. */
  newUpload(): Promise<{ statusCode: number; body: Record<string, unknown> }>;
  /** Asks for an upload, writes `content` through its URL (in blocks of `blockBytes`), returns its id. */
  upload(content: Buffer, blockBytes?: number): Promise<string>;
}

/** The calling describe block's service for file imports, on the embedded queue unless told. */
export function useFileImportService(
  options: TaskServiceOptions = {},
  transport: 'kafka' | 'postgres' = 'postgres',
): FileImportService {
  const service = useExportService(transport, {
    ...options,
    settings: { trust_proxy: true, ...options.settings },
  });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);
  const newUpload = async () => {
    const res = await service.client().request({
      method: 'POST',
      url: '/_api/admin/users/import/uploads',
      token: await adminToken(service.keys()),
      headers: HTTPS,
    });
    return { statusCode: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
  };
  return {
    ...service,
    imports,
    newUpload,
    async upload(content, blockBytes = 4 * 1024 * 1024) {
      const { statusCode, body } = await newUpload();
      if (statusCode !== 200) throw new Error(`no upload: ${statusCode} ${JSON.stringify(body)}`);
      await new BlockBlobClient(String(body.upload_url)).uploadData(content, {
        blockSize: blockBytes,
        maxSingleShotSize: blockBytes,
      });
      return String(body.upload_id);
    },
  };
}
