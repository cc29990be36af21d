import type { ChildProcess } from 'node:child_process';
import { BlockBlobClient } from '@azure/storage-blob';
import { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import type { ServiceConfig } from '../../pipeline/config.js';
import { adminClient, adminToken, makeTestKeys, type TestKeys, testConfig } from './admin-api.js';
import { testBlobConnectionString, uniqueContainer } from './blob-containers.js';
import { useTestSchema } from './database.js';
import { type ExportService, useExportService } from './exports.js';
import { HTTPS } from './imports.js';
import { type TaskEndpoints, taskEndpoints } from './task-endpoints.js';
import type { TaskServiceOptions } from './task-service.js';
import { useWorkerProcesses } from './worker-process.js';

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

/** A facade in the test's process and `make pipeline` worker processes, for tests that kill one. */
export interface FileImportWorkers {
  readonly db: ReturnType<typeof useTestSchema>;
  /** Starts a worker process with `env` on top of the blob storage's settings. */
  startWorker(env: Record<string, string>, options?: { output?: boolean }): ChildProcess;
  /** Uploads `content` through the facade's signed URL and starts an import of it with `request`; the task id. */
  importFile(content: Buffer, request: Record<string, unknown>): Promise<string>;
}

/**
 * The calling describe block's schema and container, a facade (no workers of its own: its upkeep
 * does not run, the worker processes relay the outbox) and worker processes on them.
 */
export function useFileImportWorkers(): FileImportWorkers {
  const db = useTestSchema();
  const container = uniqueContainer();
  const spawnWorker = useWorkerProcesses(db.schema);
  let keys: TestKeys;
  let config: ServiceConfig;
  let blobs: BlobStorage;
  before(async () => {
    keys = await makeTestKeys();
    config = testConfig(
      keys,
      {},
      {
        trust_proxy: true,
        azure_storage_connection_string: testBlobConnectionString(),
        azure_storage_container: container,
      },
    );
    const storage = config.export.blobStorage;
    if (!storage) throw new Error('no blob storage in the test config');
    blobs = await BlobStorage.open(storage, container);
  });
  return {
    db,
    startWorker: (env, options) =>
      spawnWorker(
        {
          AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
          AZURE_STORAGE_CONTAINER: container,
          ...env,
        },
        options,
      ),
    async importFile(content, request) {
      const client = adminClient(
        config,
        db,
        keys,
        () => {},
        () => blobs,
      );
      const token = await adminToken(keys);
      const upload = await client.request({
        method: 'POST',
        url: '/_api/admin/users/import/uploads',
        token,
        headers: HTTPS,
      });
      const { upload_id, upload_url } = JSON.parse(upload.body) as { upload_id: string; upload_url: string };
      await new BlockBlobClient(upload_url).uploadData(content);
      const res = await client.request({
        method: 'POST',
        url: '/_api/admin/users/import',
        token,
        headers: HTTPS,
        body: { ...request, source: { upload_id } },
      });
      if (res.statusCode !== 200) throw new Error(`import refused: ${res.statusCode} ${res.body}`);
      return (JSON.parse(res.body) as { id: string }).id;
    },
  };
}
