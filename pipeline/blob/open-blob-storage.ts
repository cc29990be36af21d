import type { ServiceConfig } from '../config.js';
import { EngineError } from '../errors.js';
import type { Logger } from '../log.js';
import { BlobStorage } from './blob-storage.js';
import { type EmbeddedAzurite, startEmbeddedAzurite } from './embedded-azurite.js';

/** The export files' storage of a process, or none when export is off. */
export interface ExportStorage {
  /** Undefined: export is disabled (by EXPORT_ENABLED, or no blob storage is configured). */
  readonly blobs: BlobStorage | undefined;
  close(): Promise<void>;
}

/**
 * Opens the configured blob storage. The embedded default (no DATABASE_URL) without blob settings
 * starts Azurite under the data folder; a configured deployment without them has export switched off.
 */
export async function openExportStorage(config: ServiceConfig, log: Logger): Promise<ExportStorage> {
  if (!config.export.enabled) return { blobs: undefined, close: async () => {} };
  let settings = config.export.blobStorage;
  let azurite: EmbeddedAzurite | undefined;
  if (!settings && !config.databaseUrl) {
    azurite = await startEmbeddedAzurite(config.dataDir, config.export.embeddedAzuritePort, log);
    settings = { connectionString: azurite.connectionString };
  }
  if (!settings) {
    log.warn('no blob storage configured: user export is disabled');
    return { blobs: undefined, close: async () => {} };
  }
  try {
    const blobs = await BlobStorage.open(settings, config.export.container);
    return { blobs, close: async () => azurite?.stop() };
  } catch (err) {
    await azurite?.stop();
    throw err;
  }
}

/** The export files' storage of a worker; without one its task ends UserExportDisabled (decisions 7). */
export function requireExportStorage(blobs: BlobStorage | undefined): BlobStorage {
  if (!blobs) throw new EngineError('ExportStorageMissing', 'user export is disabled');
  return blobs;
}
