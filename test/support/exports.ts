import type { BlobStorage } from '../../pipeline/blob/blob-storage.js';
import { testBlobConnectionString, uniqueContainer } from './blob-containers.js';
import { testKafkaBrokers } from './kafka.js';
import { type TaskEndpoints, taskEndpoints } from './task-endpoints.js';
import { type TaskService, type TaskServiceOptions, useTaskService } from './task-service.js';

/**
 * The environment of a `make pipeline` worker process that exports into `container` and takes its
 * tasks from the Kafka topics under `prefix`; a short session timeout, so that a killed worker's
 * partitions move on quickly.
 */
export function kafkaExportWorkerEnv(container: string, prefix: string): Record<string, string> {
  return {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: container,
    KAFKA_BROKERS: testKafkaBrokers().join(','),
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
}

/** The export service of one describe block: its schema, container, facade, bus and workers. */
export interface ExportService extends TaskService, TaskEndpoints {
  /** The container of this service's files (a client of its own, for the tests' checks). */
  readonly blobs: () => BlobStorage;
}

/**
 * A schema, a container in Azurite, a bus on the given transport, the facade and (unless
 * `workers: false`) running workers for the calling describe block. `settings` override the
 * service settings (e.g. `export_download_url_seconds`).
 */
export function useExportService(
  transport: 'kafka' | 'postgres',
  options: TaskServiceOptions = {},
): ExportService {
  const service = useTaskService(transport, {
    ...options,
    settings: {
      azure_storage_connection_string: testBlobConnectionString(),
      azure_storage_container: uniqueContainer(),
      ...options.settings,
    },
  });
  return {
    ...service,
    blobs: () => {
      const blobs = service.storage();
      if (!blobs) throw new Error('this export service has no blob storage');
      return blobs;
    },
    ...taskEndpoints('/_api/admin/users/export', service.client, service.keys),
  };
}

/** Downloads a file through its signed URL: status, headers and body as text. */
export async function download(url: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, text: await res.text() };
}
